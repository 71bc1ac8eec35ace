// Writing and printing benchmark results, and the statistics they share.
import { mkdirSync, writeFileSync } from "node:fs";

export function writeResult(name, result) {
  const dir = new URL("../results/", import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${name}.json`, dir);
  const withMeta = { ...result, measuredAt: new Date().toISOString(), machine: machineNote() };
  writeFileSync(file, JSON.stringify(withMeta, null, 2) + "\n");
  return file.pathname;
}

function machineNote() {
  return { node: process.version, platform: `${process.platform}-${process.arch}` };
}

/** Prints nested numeric results as `path  value` rows. */
export function printTable(result, prefix = "") {
  for (const [key, value] of Object.entries(result)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value && typeof value === "object" && !Array.isArray(value)) printTable(value, path);
    else if (!Array.isArray(value)) console.log(`  ${path.padEnd(48)} ${formatValue(value)}`);
  }
}

function formatValue(v) {
  return typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : String(v);
}

/** The q-quantile (0..1) of `values`, by linear interpolation. */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function summary(values) {
  return { p50: quantile(values, 0.5), p95: quantile(values, 0.95), max: Math.max(...values) };
}
