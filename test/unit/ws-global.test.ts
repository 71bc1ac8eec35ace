import { expect, test } from "vitest";
test("unit tests see the browser WebSocket global, as providers do in a page", () => {
  expect(typeof WebSocket).toBe("function");
});
