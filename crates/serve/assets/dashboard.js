// The dashboard: /api/summary drawn as a status line, three charts and the generations table
// (newest first, GENERATIONS_PAGE rows a page), refreshed whenever the run directory changes.
// A run that rates no network (eval_games = 0) gets a line saying how to rate them.
import {api, onRunChange, el, num, duration} from "/assets/common.js"

const SVG = "http://www.w3.org/2000/svg"

function svgEl(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v)
  if (text !== undefined) node.textContent = text
  return node
}

/** Nice tick values between lo and hi. */
function ticks(lo, hi, count = 5) {
  const span = hi - lo || 1
  const step = Math.pow(10, Math.floor(Math.log10(span / count)))
  const mult = [1, 2, 5, 10].find((m) => span / (step * m) <= count) || 10
  const s = step * mult
  const out = []
  for (let t = Math.ceil(lo / s) * s; t <= hi + 1e-9; t += s) out.push(Number(t.toFixed(10)))
  return out
}

/**
 * A line chart in `svg`. series: [{color, points: [[x, y, err?]], axis: "left"|"right", dash?}],
 * hlines: [{y, label, color}].
 */
function chart(svg, {series, hlines = [], xLabel, integerX = false}) {
  svg.replaceChildren()
  const width = svg.clientWidth || 500, height = svg.clientHeight || 260
  const m = {l: 52, r: 52, t: 10, b: 34}
  const all = series.flatMap((s) => s.points)
  if (!all.length) {
    svg.append(svgEl("text", {x: width / 2, y: height / 2, "text-anchor": "middle"}, "no data yet"))
    return
  }
  const xs = all.map((p) => p[0])
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)]
  if (x0 === x1) { x0 -= 1; x1 += 1 }
  const range = (axis) => {
    const pts = series.filter((s) => (s.axis || "left") === axis).flatMap((s) => s.points)
    const ys = pts.flatMap((p) => p[2] !== undefined ? [p[1] - p[2], p[1] + p[2]] : [p[1]])
    if (axis === "left") ys.push(...hlines.map((h) => h.y))
    if (!ys.length) return null
    let [lo, hi] = [Math.min(...ys), Math.max(...ys)]
    if (lo === hi) { lo -= 1; hi += 1 }
    const pad = (hi - lo) * 0.06
    return [lo - pad, hi + pad]
  }
  const ranges = {left: range("left"), right: range("right")}
  const sx = (x) => m.l + (x - x0) / (x1 - x0) * (width - m.l - m.r)
  const sy = (y, axis = "left") => {
    const [lo, hi] = ranges[axis]
    return height - m.b - (y - lo) / (hi - lo) * (height - m.t - m.b)
  }
  svg.append(svgEl("line", {x1: m.l, x2: width - m.r, y1: height - m.b, y2: height - m.b, stroke: "#999"}))
  for (const t of ticks(x0, x1)) {
    if (integerX && !Number.isInteger(t)) continue
    svg.append(svgEl("text", {x: sx(t), y: height - m.b + 14, "text-anchor": "middle"}, String(t)))
  }
  svg.append(svgEl("text", {x: (m.l + width - m.r) / 2, y: height - 4, "text-anchor": "middle"}, xLabel))
  for (const axis of ["left", "right"]) {
    if (!ranges[axis]) continue
    const x = axis === "left" ? m.l - 6 : width - m.r + 6
    for (const t of ticks(...ranges[axis])) {
      svg.append(svgEl("text", {x, y: sy(t, axis) + 4, "text-anchor": axis === "left" ? "end" : "start"}, num(t, Math.abs(t) < 10 && t % 1 ? 2 : 0)))
      if (axis === "left") svg.append(svgEl("line", {x1: m.l, x2: width - m.r, y1: sy(t), y2: sy(t), stroke: "#eee"}))
    }
  }
  for (const h of hlines) {
    svg.append(svgEl("line", {x1: m.l, x2: width - m.r, y1: sy(h.y), y2: sy(h.y), stroke: h.color, "stroke-dasharray": "5 4"}))
    svg.append(svgEl("text", {x: width - m.r - 4, y: sy(h.y) - 3, "text-anchor": "end", fill: h.color}, h.label))
  }
  for (const s of series) {
    const axis = s.axis || "left"
    const pts = [...s.points].sort((a, b) => a[0] - b[0])
    const d = pts.map((p, i) => `${i ? "L" : "M"}${sx(p[0]).toFixed(1)},${sy(p[1], axis).toFixed(1)}`).join("")
    svg.append(svgEl("path", {d, fill: "none", stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash || ""}))
    for (const p of pts) {
      if (p[2] !== undefined && Number.isFinite(p[2]) && p[2] > 0) {
        const [x, top, bottom] = [sx(p[0]), sy(p[1] + p[2], axis), sy(p[1] - p[2], axis)]
        svg.append(svgEl("line", {x1: x, x2: x, y1: top, y2: bottom, stroke: s.color, "stroke-width": 1.2, class: "error-bar"}))
        svg.append(svgEl("line", {x1: x - 4, x2: x + 4, y1: top, y2: top, stroke: s.color}))
        svg.append(svgEl("line", {x1: x - 4, x2: x + 4, y1: bottom, y2: bottom, stroke: s.color}))
      }
      if (s.dots !== false) svg.append(svgEl("circle", {cx: sx(p[0]), cy: sy(p[1], axis), r: 3, fill: s.color, class: "point"}))
    }
  }
}

/** Rows of the generations table per page (a long run has hundreds). */
const GENERATIONS_PAGE = 20
/** The page shown (0: the newest generations); kept across live refreshes. */
let generationsPage = 0
let lastSummary = null

function renderGenerations(generations) {
  const pages = Math.max(1, Math.ceil(generations.length / GENERATIONS_PAGE))
  generationsPage = Math.min(generationsPage, pages - 1)
  const newestFirst = [...generations].reverse()
  const shown = newestFirst.slice(generationsPage * GENERATIONS_PAGE, (generationsPage + 1) * GENERATIONS_PAGE)
  document.getElementById("generations-note").textContent = generations.length
    ? `(${generations.length}, newest first)` : ""
  const pager = document.getElementById("generations-pager")
  const go = (page) => { generationsPage = page; if (lastSummary) renderGenerations(lastSummary.generations) }
  const button = (label, page, id) => {
    const b = el("button", {id, type: "button"}, label)
    if (page < 0 || page >= pages) b.disabled = true
    else b.addEventListener("click", () => go(page))
    return b
  }
  pager.replaceChildren(...(pages > 1 ? [
    button("« newest", 0, "generations-first"), button("‹ newer", generationsPage - 1, "generations-newer"),
    el("span", {id: "generations-page"}, `page ${generationsPage + 1} of ${pages}`),
    button("older ›", generationsPage + 1, "generations-older"), button("oldest »", pages - 1, "generations-last"),
  ] : []))
  const tbody = document.querySelector("#generations tbody")
  tbody.replaceChildren(...shown.map((g) => {
    const gate = g.gate ? `+${g.gate[0]} =${g.gate[1]} −${g.gate[2]} (${num(100 * (g.gate[0] + g.gate[1] / 2) / Math.max(1, g.gate[0] + g.gate[1] + g.gate[2]), 1)}%)` : "–"
    const decision = g.generation === 0 ? el("span", {class: "muted"}, "initial")
      : g.promoted === true ? el("span", {class: "promoted"}, "promoted")
      : g.promoted === false ? el("span", {class: "rejected"}, "rejected") : el("span", {class: "muted"}, "in progress")
    return el("tr", {"data-generation": g.generation},
      el("td", {}, g.generation), el("td", {}, g.best || "–"), el("td", {}, gate), el("td", {}, decision),
      el("td", {}, g.elo !== null && g.elo !== undefined ? `${num(g.elo, 1)} ± ${num(g.elo_error, 1)}` : "–"),
      el("td", {}, num(g.positions_per_sec)), el("td", {}, num(g.games_per_hour)), el("td", {}, num(g.game_length, 1)),
      el("td", {}, duration(g.elapsed_secs)), el("td", {}, duration(g.cpu_secs)))
  }))
}

const BASELINE_COLORS = ["#c81e1e", "#008c3c", "#963caa", "#dc7800", "#0096aa", "#6e6e6e"]

function render(s) {
  document.getElementById("run-name").textContent = s.name
  document.getElementById("variant").textContent = s.variant
  const st = s.status
  const stageNames = {init: "making the initial network", selfplay: "self-play", train: "training",
    gate: "gating match", promote: "promoting", eval: "evaluation matches"}
  const since = st.seconds_since_change
  const active = since !== null && since !== undefined && since < 60
  const status = document.getElementById("status")
  if (st.generation === null || st.generation === undefined) {
    status.replaceChildren("no run.json yet: the run has not started")
  } else {
    let rest = `: ${stageNames[st.stage] || st.stage}`
    if (st.stage === "selfplay") {
      rest += st.shards_in_generation ? ` (${st.shards_in_generation} shard${st.shards_in_generation === 1 ? "" : "s"} written)` : " (no games written yet)"
    }
    rest += active ? ` · last change ${duration(since)} ago` : ` · nothing changed for ${duration(since)}: finished or stopped`
    status.replaceChildren("generation ", el("b", {}, st.generation), rest)
  }
  document.getElementById("status-detail").textContent =
    `${st.finished_generations} generation${st.finished_generations === 1 ? "" : "s"} finished · best network ${st.best || "–"} · ` +
    `training step ${st.checkpoint_step ?? "–"} · wall ${duration(st.elapsed_secs)} · CPU ${duration(st.cpu_secs)}`
  document.getElementById("warnings").textContent = s.warnings.join(" · ")

  lastSummary = s
  renderGenerations(s.generations)

  const baselines = s.elo.baselines.map((b, i) => ({y: b.elo, label: b.name, color: BASELINE_COLORS[i % BASELINE_COLORS.length]}))
  chart(document.getElementById("elo-chart"), {
    series: [{color: "#1f4fb4", points: s.elo.points.map((p) => [p.generation, p.elo, p.error])}],
    hlines: baselines, xLabel: "generation", integerX: true,
  })
  document.getElementById("elo-note").textContent = `(${s.elo.points.length} rated, 95% error bars; from eval/ratings.csv)`
  const hint = document.getElementById("elo-hint")
  hint.hidden = !s.rating_hint
  if (s.rating_hint) {
    hint.replaceChildren("This run plays no evaluation matches (", el("code", {}, "eval_games = 0"),
      "), so none of its networks is rated here. Rate them against the ladder (Fairy-Stockfish included when built) with ",
      el("code", {id: "gauntlet-command"}, s.rating_hint.command),
      "; the ratings go to its gauntlet/ directory (ratings.csv, networks.csv, elo-cpu.svg).",
      ...(s.rating_hint.gauntlet_chart ? [" ", el("a", {href: "/run/gauntlet/elo-cpu.svg"}, "gauntlet/elo-cpu.svg")] : []))
  }
  document.getElementById("elo-legend").replaceChildren(
    el("span", {}, el("i", {style: "background:#1f4fb4"}), "networks"),
    ...baselines.map((b) => el("span", {}, el("i", {style: `background:${b.color}`}), b.label)))

  const loss = (key) => s.losses.filter((p) => p[key] !== null && p[key] !== undefined).map((p) => [p.step, p[key]])
  chart(document.getElementById("loss-chart"), {
    series: [{color: "#b5471b", points: loss("total"), dots: false}, {color: "#1f4fb4", points: loss("policy"), dots: false},
      {color: "#2e7d32", points: loss("value"), dots: false}],
    xLabel: "training step",
  })
  const speed = s.generations.filter((g) => g.positions_per_sec !== null && g.positions_per_sec !== undefined)
  chart(document.getElementById("speed-chart"), {
    series: [{color: "#1f4fb4", points: speed.map((g) => [g.generation, g.positions_per_sec])},
      {color: "#b5471b", axis: "right", dash: "4 3", points: speed.filter((g) => g.games_per_hour).map((g) => [g.generation, g.games_per_hour])}],
    xLabel: "generation", integerX: true,
  })
  const log = document.getElementById("log")
  log.textContent = s.log.slice(-60).join("\n") || "(empty)"
  log.scrollTop = log.scrollHeight
  document.getElementById("config").textContent = s.config || "(no config.toml)"
  document.body.dataset.generations = String(st.finished_generations)
}

async function refresh() {
  try {
    render(await api("/api/summary"))
  } catch (e) {
    document.getElementById("status").textContent = `cannot read the run: ${e.message}`
  }
}

let pending = null
onRunChange(() => {
  // Coalesce bursts of changes into one refresh.
  if (pending) return
  pending = setTimeout(() => { pending = null; refresh() }, 150)
})
window.addEventListener("resize", refresh)
refresh()
