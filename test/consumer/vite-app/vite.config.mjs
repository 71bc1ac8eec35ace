// A consumer app's Vite config, as small as a new project's. Not importing
// "vite" here keeps the config loadable from a temp folder that has no vite
// of its own (the test runs the repo's). Only the test's paths are set.
export default {
  base: process.env.CONSUMER_BASE ?? "/",
  logLevel: "warn",
  build: {
    outDir: process.env.CONSUMER_OUT ?? "dist",
    emptyOutDir: true,
  },
};
