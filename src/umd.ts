/**
 * The UMD bundle's entry (dist/bargein.umd.js, global `Bargein`): the root
 * entry's names, and bargein/advanced's under `Bargein.advanced`, so a page
 * with a plain <script> tag reaches the building blocks too.
 */
export * from "./index.js";
export * as advanced from "./advanced.js";
