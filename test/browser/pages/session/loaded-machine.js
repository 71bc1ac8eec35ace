// Session options for test pages whose assertions are about something other than these waits. On a
// loaded machine the STT's last words can come later than the default 1.5 s flush wait (the turn then
// ends with what it had: a split question), and a starved page hands the uplink frames older than the
// default 0.5 s budget (the STT stream is then ended and reopened, with a warning). The uplink's own
// tests (uplink.spec.ts) set their budget and flush wait themselves.

/** How long the test pages' sessions wait for the STT's last words (the SDK's default is 1.5 s). */
export const TEST_FLUSH_TIMEOUT_MS = 6000;
/** The test pages' sessions' uplink latency budget (the SDK's default is 0.5 s). */
export const TEST_UPLINK_BUDGET_MS = 3000;
