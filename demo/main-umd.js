// The demo, with the SDK from the UMD bundle loaded by a plain <script> tag (global `Bargein`).
import { runDemo } from "./ui.js";

runDemo(window.Bargein, { assetsPath: "/dist/" });
