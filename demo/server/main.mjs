// `npm run demo`: the reference backend on 127.0.0.1 (PORT, default 8080).
// Env: HOST, PORT, BARGEIN_TOKEN (require auth_id / Bearer). See demo/README.md.
// If pocketsphinx is missing it is installed when we are root (apt-get); otherwise
// the command is printed and the STT answers with an Error (the demo page then
// offers typed input).
import { forgetRecogniserCheck, recogniserAvailable } from "./pocketsphinx.mjs";
import { installCommand, tryInstallSpeechPackages } from "./speech-deps.mjs";
import { startReferenceBackend } from "./backend.mjs";

if (!(await recogniserAvailable())) {
  if (tryInstallSpeechPackages()) forgetRecogniserCheck();
  if (!(await recogniserAvailable())) {
    console.log(`speech recognition is off (pocketsphinx not found). To enable it run:\n  ${installCommand()}`);
    console.log("meanwhile the demo runs with typed input in place of speech (see demo/README.md).");
  }
}

const backend = await startReferenceBackend({
  port: Number(process.env.PORT ?? 8080),
  host: process.env.HOST ?? "127.0.0.1",
  token: process.env.BARGEIN_TOKEN,
});
console.log(`bargein reference backend on ${backend.url}/`);

for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, () => backend.close().then(() => process.exit(0)));
}
