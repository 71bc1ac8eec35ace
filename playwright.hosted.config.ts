// The hosted-service providers' full matrix in real sessions (test/browser/hosted/): a full turn, a
// barge-in judged by each provider's own word timings, the reconnect path and every fault row, for
// deepgramStt (Nova, Flux), assemblyaiStt, elevenlabsTts and cartesiaTts. About 6 minutes on a quiet
// 2-core machine, too long for `npm test`, which runs the demo with Deepgram and ElevenLabs instead:
//   npm run test:hosted        (HOSTED_ONLY=deepgram-flux,cartesia for some of them)
import base from "./playwright.config";

export default { ...base, testDir: "test/browser/hosted", testIgnore: [], workers: 1, projects: [{ name: "hosted" }] };
