// Play a network of the run. The board only ever shows positions the server sent: a move the
// person makes on the board is sent as UCI and the board is updated from the answer (or the
// server's error message is shown), then the engine is asked for its move.
import {api, post, onRunChange, el, num} from "/assets/common.js"
import {makeBoard, markPly, drawPolicy, wdlBar, COLOR} from "/assets/board.js"
import {INPUT_EVENT_TYPE} from "/assets/vendor/cm-chessboard/src/Chessboard.js"
import {PROMOTION_DIALOG_RESULT_TYPE} from "/assets/vendor/cm-chessboard/src/extensions/promotion-dialog/PromotionDialog.js"

const board = makeBoard(document.getElementById("board"))
const play = {state: null, busy: false}
window.atomzeroPlay = play

function message(text, error = false) {
  const node = document.getElementById("message")
  node.textContent = text
  node.className = error ? "error" : ""
}

async function loadNetworks() {
  const {networks, variant, max_nodes} = await api("/api/networks")
  document.getElementById("variant").textContent = variant
  document.getElementById("nodes").max = max_nodes
  const select = document.getElementById("network")
  const chosen = select.value
  select.replaceChildren(...[...networks].reverse().map((n) =>
    el("option", {value: n.name}, n.best ? `${n.name} (best)` : n.name)))
  const best = networks.find((n) => n.best)
  select.value = chosen && networks.some((n) => n.name === chosen) ? chosen : best ? best.name : select.value
}

function render(state, animate = true) {
  play.state = state
  const human = state.human === "white" ? COLOR.white : COLOR.black
  if (board.getOrientation() !== human) board.setOrientation(human)
  play.settled = board.setPosition(state.fen, animate)
  const last = state.plies[state.plies.length - 1]
  markPly(board, last || null)
  const moves = document.getElementById("moves")
  const cells = []
  state.plies.forEach((p, i) => {
    if (i % 2 === 0) cells.push(el("div", {class: "no"}, `${i / 2 + 1}.`))
    cells.push(el("div", {class: "mv" + (p.explosion.length ? " boom" : "") + (i === state.plies.length - 1 ? " current" : "")}, p.san))
  })
  moves.replaceChildren(...cells)
  moves.scrollTop = moves.scrollHeight
  const engineSearch = [...state.plies].reverse().find((p) => p.search)
  const search = document.getElementById("search")
  if (engineSearch) {
    const s = engineSearch.search
    search.className = ""
    search.replaceChildren(
      el("div", {}, `${engineSearch.san}: value for the engine W ${num(100 * s.wdl[0])}% D ${num(100 * s.wdl[1])}% L ${num(100 * s.wdl[2])}%`),
      wdlBar(s.wdl),
      el("table", {class: "policy"}, ...s.policy.slice(0, 8).map((e) =>
        el("tr", {}, el("td", {}, e.san), el("td", {}, `${e.visits ?? ""} visits`), el("td", {}, `${num(100 * e.weight, 1)}%`)))))
  }
  drawPolicy(board, null)
  const status = document.getElementById("status")
  if (state.result) {
    const won = state.result === (state.human === "white" ? "1-0" : "0-1")
    const verdict = state.result === "1/2-1/2" ? "a draw" : won ? "you won" : "you lost"
    status.replaceChildren("Game over: ", el("b", {id: "result"}, state.result), ` (${state.termination}: ${verdict})`)
    board.disableMoveInput()
  } else if (state.turn === state.human) {
    status.textContent = `Your move (${state.human})`
    board.enableMoveInput(onInput, human)
  } else {
    status.textContent = "Engine thinking…"
    board.disableMoveInput()
  }
  document.getElementById("download").replaceChildren(
    el("a", {href: `/api/play/${state.id}/pgn`, download: "", id: "pgn-link"}, "Download PGN"),
    el("span", {class: "muted"}, ` · saved as ${state.pgn_file}`))
  document.body.dataset.plies = String(state.plies.length)
  document.body.dataset.result = state.result || ""
}

async function engineMove() {
  play.busy = true
  try {
    render(await post(`/api/play/${play.state.id}/engine`))
  } catch (e) {
    message(e.message, true)
  } finally {
    play.busy = false
  }
}

async function sendMove(uci) {
  if (play.busy) return
  play.busy = true
  let ok = false
  try {
    render(await post(`/api/play/${play.state.id}/move`, {uci}))
    message("")
    ok = true
  } catch (e) {
    message(e.message, true)
    board.setPosition(play.state.fen, false)
  } finally {
    play.busy = false
  }
  if (ok && !play.state.result && play.state.turn !== play.state.human) {
    // Let a capture's explosion flash before the engine's reply replaces the markers.
    const last = play.state.plies[play.state.plies.length - 1]
    if (last && last.explosion.length) await new Promise((resolve) => setTimeout(resolve, 600))
    await engineMove()
  }
}

function onInput(event) {
  if (!play.state || play.busy) return false
  switch (event.type) {
    case INPUT_EVENT_TYPE.moveInputStarted:
      board.removeLegalMovesMarkers()
      board.addLegalMovesMarkers(play.state.legal.filter((u) => u.startsWith(event.squareFrom))
        .map((u) => ({to: u.slice(2, 4), promotion: u[4]})))
      return true
    case INPUT_EVENT_TYPE.validateMoveInput: {
      board.removeLegalMovesMarkers()
      const base = event.squareFrom + event.squareTo
      const promotions = play.state.legal.filter((u) => u.length === 5 && u.startsWith(base))
      if (promotions.length) {
        board.showPromotionDialog(event.squareTo, board.getOrientation(), (result) => {
          if (result.type === PROMOTION_DIALOG_RESULT_TYPE.pieceSelected) sendMove(base + result.piece.charAt(1))
          else board.setPosition(play.state.fen, false)
        })
      } else {
        // Sent as it is: the server decides whether it is legal and says why not.
        sendMove(base)
      }
      return false
    }
    case INPUT_EVENT_TYPE.moveInputCanceled:
      board.removeLegalMovesMarkers()
      return true
  }
  return true
}

document.getElementById("start").onclick = async () => {
  message("")
  try {
    const state = await post("/api/play", {
      network: document.getElementById("network").value,
      nodes: Number(document.getElementById("nodes").value),
      color: document.getElementById("color").value,
    })
    render(state, false)
    if (!state.result && state.turn !== state.human) await engineMove()
  } catch (e) {
    message(e.message, true)
  }
}

onRunChange(() => loadNetworks().catch((e) => message(e.message, true)))
