// React is a peer dependency (a devDependency here, for the Chromium tests, without
// @types/react): its hooks are typed by ReactHooks (use-voice-session.ts), so the
// module itself needs no types here.
declare module "react";
