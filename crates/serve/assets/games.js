// The game viewer: pick a file of the run and a game in it, then step through it. Position
// `ply` means "after `ply` moves"; the search shown is the one made in that position (the
// decision of move ply+1), with arrows for its strongest moves.
import {api, onRunChange, el, num, showRunName} from "/assets/common.js"
import {makeBoard, markPly, drawPolicy, wdlBar, COLOR} from "/assets/board.js"

const board = makeBoard(document.getElementById("board"))
const view = {file: null, index: null, game: null, ply: 0}
window.atomzeroViewer = view

const KIND_NAMES = {selfplay: "Self-play", gate: "Gating", eval: "Evaluation", play: "Played here"}

async function loadFiles() {
  let files
  try { files = (await api("/api/games")).files } catch (e) { return }
  const list = document.getElementById("files")
  const nodes = []
  let kind = null
  for (const f of files) {
    if (f.kind !== kind) { kind = f.kind; nodes.push(el("div", {class: "group"}, KIND_NAMES[kind] || kind)) }
    const name = f.file.split("/").pop()
    nodes.push(el("div", {class: f.file === view.file ? "selected" : null, "data-file": f.file,
      onclick: () => selectFile(f.file)}, name))
  }
  list.replaceChildren(...nodes)
  if (!view.file && files.length) {
    // Start with the newest self-play shard (or whatever exists).
    const selfplay = files.filter((f) => f.kind === "selfplay")
    await selectFile((selfplay.length ? selfplay[selfplay.length - 1] : files[0]).file)
  }
}

async function selectFile(file, index = 0) {
  view.file = file
  for (const node of document.querySelectorAll("#files div[data-file]")) {
    node.classList.toggle("selected", node.dataset.file === file)
  }
  document.getElementById("file-name").textContent = file
  let games
  try { games = (await api(`/api/games/file?file=${encodeURIComponent(file)}`)).games } catch (e) {
    document.getElementById("games").replaceChildren(el("div", {class: "warn"}, e.message))
    return
  }
  document.getElementById("games").replaceChildren(...games.map((g) =>
    el("div", {"data-index": g.index, onclick: () => selectGame(g.index)},
      `${g.index + 1}. ${g.white} – ${g.black}  ${g.result}  (${g.plies} plies${g.termination ? ", " + g.termination : ""})`)))
  if (games.length) await selectGame(Math.min(index, games.length - 1))
}

async function selectGame(index) {
  view.index = index
  for (const node of document.querySelectorAll("#games div[data-index]")) {
    node.classList.toggle("selected", Number(node.dataset.index) === index)
  }
  try {
    view.game = await api(`/api/games/game?file=${encodeURIComponent(view.file)}&index=${index}`)
  } catch (e) {
    document.getElementById("players").textContent = e.message
    return
  }
  const g = view.game
  document.getElementById("players").textContent = `${g.white} – ${g.black}   ${g.result}`
  document.getElementById("game-info").textContent =
    `${g.variant} · ${g.plies.length} plies${g.termination ? " · " + g.termination : ""} · ${g.file} #${g.index + 1}`
  const moves = document.getElementById("moves")
  const cells = []
  const startFen = g.start_fen.split(" ")
  let moveNo = Number(startFen[5] || 1)
  let white = startFen[1] !== "b"
  g.plies.forEach((p, i) => {
    if (white || i === 0) cells.push(el("div", {class: "no"}, `${moveNo}.`))
    if (!white && i === 0) cells.push(el("div", {}, "…"))
    cells.push(el("div", {class: "mv" + (p.explosion.length ? " boom" : ""), "data-ply": i + 1,
      onclick: () => show(i + 1)}, p.san))
    if (!white) moveNo += 1
    white = !white
  })
  moves.replaceChildren(...cells)
  await show(0)
}

async function show(ply) {
  const g = view.game
  if (!g) return
  ply = Math.max(0, Math.min(g.plies.length, ply))
  const forward = ply === view.ply + 1
  view.ply = ply
  const fen = ply === 0 ? g.start_fen : g.plies[ply - 1].fen
  view.settled = board.setPosition(fen, forward)
  await view.settled
  if (view.ply !== ply || view.game !== g) return // a later step or game took over
  markPly(board, ply === 0 ? null : g.plies[ply - 1])
  for (const node of document.querySelectorAll("#moves .mv")) {
    const current = Number(node.dataset.ply) === ply
    node.classList.toggle("current", current)
    if (current) node.scrollIntoView({block: "nearest"})
  }
  const info = document.getElementById("ply-info")
  if (ply === 0) {
    info.textContent = "start position"
  } else {
    const p = g.plies[ply - 1]
    info.replaceChildren(`after ${p.san} (${p.uci})`,
      p.explosion.length ? el("span", {class: "warn", id: "explosion"}, el("span", {class: "swatch"}), `exploded: ${p.explosion.join(" ")}`) : "")
  }
  const next = g.plies[ply]
  const search = document.getElementById("search")
  if (next && next.search) {
    drawPolicy(board, next.search.policy)
    const s = next.search
    search.className = ""
    search.replaceChildren(
      el("div", {}, `move played: ${next.san} · value for the side to move: W ${num(100 * s.wdl[0])}% D ${num(100 * s.wdl[1])}% L ${num(100 * s.wdl[2])}%`),
      wdlBar(s.wdl),
      el("table", {class: "policy"}, el("tr", {}, el("th", {}, "move"), el("th", {}, "policy target"), el("th", {}, "")),
        ...s.policy.slice(0, 12).map((e) => el("tr", {class: e.uci === next.uci ? "promoted" : null},
          el("td", {}, e.san), el("td", {}, `${num(100 * e.weight, 1)}%`),
          el("td", {style: "text-align:left"}, el("span", {class: "bar", style: `width:${Math.round(120 * e.weight)}px`})))))
    )
  } else {
    drawPolicy(board, null)
    search.className = "muted"
    search.textContent = next ? `no search recorded for ${next.san} (a fast search move, or a game from a PGN)` : "game over"
  }
}

document.getElementById("first").onclick = () => show(0)
document.getElementById("prev").onclick = () => show(view.ply - 1)
document.getElementById("next").onclick = () => show(view.ply + 1)
document.getElementById("last").onclick = () => view.game && show(view.game.plies.length)
document.addEventListener("keydown", (event) => {
  if (!view.game || event.target.tagName === "INPUT") return
  const moves = {ArrowLeft: view.ply - 1, ArrowRight: view.ply + 1, Home: 0, End: view.game.plies.length}
  if (event.key in moves) { event.preventDefault(); show(moves[event.key]) }
})
showRunName()
onRunChange(() => loadFiles())
