// JSON over plain HTTP for the backend's own routes and the emulators' token endpoints.

/** @param {import("node:http").ServerResponse} res @param {number} status @param {unknown} body */
export function sendJson(res, status, body) {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" });
  res.end(JSON.stringify(body));
}

/**
 * The request's body as parsed JSON (`undefined` for an empty body); rejects when it is not
 * JSON or is longer than `maxBytes` (the request is then destroyed: a token request is tiny).
 * @param {import("node:http").IncomingMessage} req @param {number} [maxBytes]
 * @returns {Promise<unknown>}
 */
export function readJsonBody(req, maxBytes = 4096) {
  return new Promise((resolve, reject) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => {
      raw += chunk;
      if (raw.length > maxBytes) {
        req.destroy();
        reject(new Error(`the body is over ${maxBytes} bytes`));
      }
    });
    req.on("error", reject);
    req.on("end", () => {
      try {
        resolve(raw.trim() === "" ? undefined : JSON.parse(raw));
      } catch {
        reject(new Error("the body is not JSON"));
      }
    });
  });
}
