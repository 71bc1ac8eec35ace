// Acceptance tests of open work (test/browser/pending/): each fails today and
// names the work that will make it pass. Not part of `npm test`:
//   npx playwright test --config playwright.pending.config.ts
import base from "./playwright.config";

export default { ...base, testDir: "test/browser/pending", testIgnore: [], workers: 1, projects: [{ name: "pending" }] };
