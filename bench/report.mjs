// Renders benchmark results (the JSON that run.mjs writes) as markdown tables: one column per project
// size, timings as "p50 (p90)" milliseconds, then the ratios and the budget verdicts.

export const BUDGETS = {
  warm_status_ms: { limit: 300, size: "10k+50k" },
  skip_fraction: { limit: 0.02 },
};

const ms = (x) => (x === null || x === undefined ? "–" : x >= 100 ? `${Math.round(x)}` : `${x.toFixed(1)}`);

function timing(figure) {
  if (!figure?.ms) return figure?.pending ? "pending" : "–";
  return `${ms(figure.ms.p50)} (${ms(figure.ms.p90)})`;
}

function observation(figure) {
  if (!figure?.observation_ms) return "–";
  return `${ms(figure.observation_ms.p50)} (${ms(figure.observation_ms.p90)})`;
}

function memory(figure) {
  if (!figure?.peak_kb) return "–";
  return `${Math.round(figure.peak_kb.p50 / 1024)} MB`;
}

function ratio(value, digits = 2) {
  return value === null || value === undefined ? "–" : `${value.toFixed(digits)}×`;
}

function percent(value) {
  return value === null || value === undefined ? "–" : `${(value * 100).toFixed(2)} %`;
}

function table(header, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** @param {{sizes: any[]}} results */
export function renderMarkdown(results) {
  const sizes = results.sizes;
  const header = ["", ...sizes.map((s) => `${s.label}`)];
  const row = (name, cell) => [name, ...sizes.map(cell)];
  const f = (key) => (s) => s.figures[key];

  const timings = table(["wall time, ms: p50 (p90)", ...header.slice(1)], [
    row("files: source + installed", (s) => `${s.sources} + ${s.installed}`),
    row("`node -e 0` (the Node floor)", (s) => timing(f("floor")(s))),
    row("`vouch status --json`, cold (empty stat cache)", (s) => timing(f("status_cold")(s))),
    row("`vouch status --json`, warm", (s) => timing(f("status_warm")(s))),
    row("… of which the scan (its `observation.duration_ms`)", (s) => observation(f("status_warm")(s))),
    row("`vouch status --json`, warm, without the native scan (`VOUCH_NATIVE=0`)", (s) => timing(f("status_warm_portable")(s))),
    row("`node bench/scanFloor.mjs` (git ls-files + lstat of every input)", (s) => timing(f("scan_floor")(s))),
    row("`turbo run check --dry=json` (npm bin)", (s) => timing(f("turbo")(s))),
    row("`turbo run check --dry=json` (native binary)", (s) => timing(f("turbo_native")(s))),
    row("turbo dry run, node_modules/** hashed too", (s) => timing(f("turbo_installed")(s))),
    row("`vouch run check --if-due` on CURRENT (skip)", (s) => timing(f("skip")(s))),
    row("`vouch status --json` after one source edit", (s) => timing(f("status_after_edit")(s))),
    row("the check's own run time (receipt)", (s) => (s.check_run_ms ? ms(s.check_run_ms) : "pending")),
    row("the check", (s) => (s.check === "typecheck" ? "TypeScript, `tsc --noEmit`" : `reads the sources, waits out ${ms(s.check_ms)} ms`)),
    row("`vouch run check`, first run, wall", (s) => timing(f("run_first")(s))),
  ]);

  const ratios = table(["ratios", ...header.slice(1)], [
    row("warm status ÷ turbo (npm bin)", (s) => ratio(s.ratios?.warm_status_over_turbo)),
    row("warm status ÷ turbo (native)", (s) => ratio(s.ratios?.warm_status_over_turbo_native)),
    row("cold status ÷ turbo (npm bin)", (s) => ratio(s.ratios?.cold_status_over_turbo)),
    row("warm status − Node floor, ms", (s) => ms(s.ratios?.warm_status_minus_floor_ms)),
    row("warm status ÷ scan floor", (s) => ratio(s.ratios?.warm_status_over_scan_floor)),
    row("warm status ÷ the same without the native scan", (s) => ratio(s.ratios?.warm_status_over_portable)),
    row("skip ÷ check run time", (s) => percent(s.ratios?.skip_over_check)),
    row("shortest check the skip is 2 % of, s", (s) =>
      s.ratios?.skip_break_even_check_ms ? (s.ratios.skip_break_even_check_ms / 1000).toFixed(1) : "–",
    ),
  ]);

  const memoryTable = table([`peak RSS, p50 (${results.machine?.peak_memory_method ?? "?"})`, ...header.slice(1)], [
    row("`node -e 0`", (s) => memory(f("floor")(s))),
    row("`vouch status --json`, cold", (s) => memory(f("status_cold")(s))),
    row("`vouch status --json`, warm", (s) => memory(f("status_warm")(s))),
    row("`vouch run check --if-due` (skip)", (s) => memory(f("skip")(s))),
    row("`turbo run check --dry=json` (npm bin)", (s) => memory(f("turbo")(s))),
    row("turbo dry run, node_modules/** hashed too", (s) => memory(f("turbo_installed")(s))),
  ]);

  const verdicts = [];
  for (const s of sizes) {
    if (s.label === BUDGETS.warm_status_ms.size) {
      const p50 = s.figures.status_warm?.ms?.p50;
      verdicts.push(
        `- warm \`vouch status\` on ${s.label} under ${BUDGETS.warm_status_ms.limit} ms: ` +
          (p50 === undefined ? "pending" : `${ms(p50)} ms p50, **${p50 < BUDGETS.warm_status_ms.limit ? "met" : "missed"}**`),
      );
    }
  }
  for (const s of sizes) {
    const fraction = s.ratios?.skip_over_check;
    verdicts.push(
      `- skip under 2 % of the check's run time on ${s.label}: ` +
        (fraction === undefined || fraction === null
          ? "pending"
          : `${percent(fraction)} of ${ms(s.check_run_ms)} ms, **${fraction < BUDGETS.skip_fraction.limit ? "met" : "missed"}**`),
    );
  }

  const problems = sizes.flatMap((s) => [
    ...(s.probes ?? []).filter((p) => !p.ok).map((p) => `- ${s.label}: ${p.name}: expected ${p.expected}, got ${p.got}`),
    ...(s.errors ?? []).map((e) => `- ${s.label}: ${e}`),
  ]);

  return [
    timings,
    "",
    ratios,
    "",
    memoryTable,
    "",
    "Budgets:",
    "",
    ...verdicts,
    ...(problems.length > 0 ? ["", "Problems seen:", "", ...problems] : []),
    "",
  ].join("\n");
}
