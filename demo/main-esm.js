// The demo, with the SDK imported as an ES module.
import * as Bargein from "/dist/bargein.js";
import { runDemo } from "./ui.js";

runDemo(Bargein, { assetsPath: "/dist/" });
