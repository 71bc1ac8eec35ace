// React is a peer dependency and not installed in this repo: its hooks are typed
// by ReactHooks (use-voice-session.ts), so the module itself needs no types here.
declare module "react";
