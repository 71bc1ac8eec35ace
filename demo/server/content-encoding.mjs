// Which pre-compressed copy of a file to send (scripts/precompress.mjs writes FILE.br and FILE.gz):
// content negotiation on Accept-Encoding (RFC 9110 §12.5.3), pure, for demo/server/static.mjs.

/** The copies a file may have, best first, and the Content-Encoding each is sent with. */
export const VARIANTS = [
  { suffix: ".br", encoding: "br" },
  { suffix: ".gz", encoding: "gzip" },
];

/**
 * The q-value the request gives `encoding` (0 when refused or not named; `*` stands for any
 * encoding not named). `x-gzip` is gzip (RFC 9110 §8.4.1.3).
 * @param {string | undefined} header Accept-Encoding
 * @param {string} encoding
 */
export function acceptance(header, encoding) {
  if (!header) return 0;
  let star = 0;
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    const q = qOf(params);
    const token = name === "x-gzip" ? "gzip" : name.trim();
    if (token === encoding) return q;
    if (token === "*") star = q;
  }
  return star;
}

/**
 * The variant to send: the one the request accepts with the highest q (ties go to the smaller
 * file, br before gzip), among those `has(suffix)` says exist; undefined: the file as it is.
 * @param {string | undefined} header
 * @param {(suffix: string) => boolean} has
 */
export function pickVariant(header, has) {
  let best;
  let bestQ = 0;
  for (const v of VARIANTS) {
    const q = acceptance(header, v.encoding);
    if (q > bestQ && has(v.suffix)) {
      best = v;
      bestQ = q;
    }
  }
  return best;
}

function qOf(params) {
  for (const p of params) {
    const [key, value] = p.split("=").map((s) => s.trim());
    if (key === "q") {
      const q = Number(value);
      return Number.isFinite(q) ? Math.min(1, Math.max(0, q)) : 0;
    }
  }
  return 1;
}
