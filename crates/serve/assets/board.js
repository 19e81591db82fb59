// The board of the viewer and the play page: cm-chessboard (vendored, MIT) with markers for
// explosions and the last move, and arrows for the search's policy.
import {Chessboard, COLOR, FEN} from "/assets/vendor/cm-chessboard/src/Chessboard.js"
import {Markers} from "/assets/vendor/cm-chessboard/src/extensions/markers/Markers.js"
import {Arrows} from "/assets/vendor/cm-chessboard/src/extensions/arrows/Arrows.js"
import {PromotionDialog} from "/assets/vendor/cm-chessboard/src/extensions/promotion-dialog/PromotionDialog.js"

export {COLOR, FEN}
export const EXPLOSION = {class: "marker-explosion", slice: "markerSquare"}
export const EXPLODED = {class: "marker-exploded", slice: "markerSquare"}
export const LAST_MOVE = {class: "marker-lastmove", slice: "markerSquare"}
const ARROWS = [1, 2, 3, 4].map((i) => ({class: `arrow-w${i}`}))

/** A board in `element`. */
export function makeBoard(element, orientation = COLOR.white) {
  return new Chessboard(element, {
    position: FEN.empty,
    orientation,
    assetsUrl: "/assets/vendor/cm-chessboard/assets/",
    style: {cssClass: "default", showCoordinates: true, animationDuration: 200},
    extensions: [
      {class: Markers, props: {autoMarkers: null}},
      {class: Arrows},
      {class: PromotionDialog},
    ],
  })
}

let flashTimer = null

/** Marks the last move and flashes the squares it blew up (they stay faint afterwards). */
export function markPly(board, ply) {
  board.removeMarkers(LAST_MOVE)
  board.removeMarkers(EXPLOSION)
  board.removeMarkers(EXPLODED)
  if (flashTimer) { clearTimeout(flashTimer); flashTimer = null }
  if (!ply) return
  if (ply.from) board.addMarker(LAST_MOVE, ply.from)
  if (ply.to) board.addMarker(LAST_MOVE, ply.to)
  if (ply.explosion && ply.explosion.length) {
    for (const sq of ply.explosion) board.addMarker(EXPLOSION, sq)
    flashTimer = setTimeout(() => {
      board.removeMarkers(EXPLOSION)
      for (const sq of ply.explosion) board.addMarker(EXPLODED, sq)
      flashTimer = null
    }, 1500)
  }
}

/** Draws the policy's strongest moves as arrows, thicker-looking for larger shares. */
export function drawPolicy(board, policy) {
  board.removeArrows()
  if (!policy) return
  for (const entry of policy.slice(0, 4)) {
    if (entry.weight < 0.05 || !entry.from || !entry.to || entry.from === entry.to) continue
    const bucket = entry.weight >= 0.5 ? 0 : entry.weight >= 0.25 ? 1 : entry.weight >= 0.1 ? 2 : 3
    board.addArrow(ARROWS[bucket], entry.from, entry.to)
  }
}

/** A win/draw/loss bar for the side to move. */
export function wdlBar(wdl) {
  const bar = document.createElement("div")
  bar.className = "wdl"
  const parts = [["w", wdl[0]], ["d", wdl[1]], ["l", wdl[2]]]
  for (const [cls, share] of parts) {
    const span = document.createElement("span")
    span.className = cls
    span.style.width = `${Math.max(0, share) * 100}%`
    bar.append(span)
  }
  return bar
}
