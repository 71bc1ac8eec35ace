/** The package version; rollup replaces the placeholder at build time. */
export const VERSION: string = "__BARGEIN_VERSION__";
