// The reference backend: serves the demo and test pages with COOP/COEP headers
// on 127.0.0.1 (port from PORT, default 8080). The services (STT, TTS, LLM) are
// added by the reference-backend issue.
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { createStaticHandler } from "./static.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? "127.0.0.1";
const serveStatic = createStaticHandler(root);

const server = createServer((req, res) => {
  if (serveStatic(req, res)) return;
  res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(`not found: ${req.url}\n`);
});
server.listen(port, host, () => {
  console.log(`bargein reference backend on http://${host}:${port}/`);
});
