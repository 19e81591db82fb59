// The pages of `atomzero serve` used as a person would, in headless Debian chromium driven by
// playwright-core (scripts/checks/serve-browser.sh starts the server and passes its address).
//
// 1. Dashboard: the run's generations are listed with their gate decisions, the Elo chart has
//    its points and error bars; then the run is extended by one generation while the page is
//    open, and the page shows it without a reload (server-sent events).
// 2. Games: a self-play game is stepped through with the arrow keys (the move list follows);
//    at a capture the exploded squares are highlighted on the board; a move with a recorded
//    search shows its policy target as a list and as arrows; a gating game from a PGN opens too.
// 3. Play: a game against the run's best network, by clicking squares: first an illegal move
//    (the server's message is shown), then seeded random legal moves (captures first) until the
//    game ends; the PGN is downloaded and has the run's [Variant] ("Atomic" for atomic).
// 4. With --big-url (a second server over a run of --big-generations generations with
//    eval_games = 0): the "now" panel and the charts come first, the Elo chart on the first
//    screen; the generations table shows 20 rows a page, newest first, and pages back to
//    generation 0; the page says how to rate the run's networks (atomzero gauntlet).
//
// Every wait is on a condition with a timeout; screenshots go to --shots.
// Usage: node scripts/serve_browser.mjs --url URL --run DIR --bin ATOMZERO --shots DIR
//        --chromium PATH --modules NODE_MODULES_DIR [--big-url URL --big-generations N]
import {createRequire} from "node:module"
import {execFileSync} from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import os from "node:os"

const args = {}
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1]
for (const key of ["url", "run", "bin", "shots", "chromium", "modules"]) {
  if (!args[key]) throw new Error(`missing --${key}`)
}
const require = createRequire(path.join(args.modules, "noop.js"))
const {chromium} = require("playwright-core")

let passed = 0
function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`)
  passed += 1
  console.log(`ok   ${what}`)
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "atomzero-chromium-"))
// A fresh, empty profile; no background traffic (this machine reaches no other host).
const context = await chromium.launchPersistentContext(profile, {
  executablePath: args.chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: {width: 1400, height: 1000},
  acceptDownloads: true,
})
fs.mkdirSync(args.shots, {recursive: true})
const shot = async (page, name) => {
  const file = path.join(args.shots, name)
  await page.screenshot({path: file, fullPage: true})
  console.log(`shot ${file}`)
}
const errors = []
context.on("weberror", (e) => errors.push(String(e.error())))
const WAIT = {timeout: 30_000}

try {
  // --- 1. Dashboard -------------------------------------------------------------------------
  const page = context.pages()[0] || await context.newPage()
  context.on("response", (r) => {
    const expected = r.status() === 400 && /\/api\/play\/\d+\/move$/.test(r.url())
    if (r.status() >= 400 && !expected) errors.push(`${r.status()} ${r.url()}`)
  })
  await page.goto(args.url)
  const timeline = fs.readFileSync(path.join(args.run, "timeline.jsonl"), "utf8").trim().split("\n")
  await page.waitForFunction((n) => document.querySelectorAll("#generations tbody tr").length === n, timeline.length, WAIT)
  const rows = await page.$$eval("#generations tbody tr", (trs) => trs.map((tr) => tr.innerText))
  check(rows.length === timeline.length, `dashboard lists the run's ${timeline.length} generations`)
  const decisions = rows.filter((r) => /promoted|rejected/.test(r)).length
  check(decisions === timeline.length - 1, `every generation after 0 shows promoted or rejected (${decisions})`)
  check(await page.$$eval("#elo-chart circle.point", (c) => c.length) >= 1, "the Elo chart has points")
  check(await page.$$eval("#elo-chart line.error-bar", (c) => c.length) >= 1, "the Elo chart has error bars")
  check(await page.$$eval("#loss-chart path", (p) => p.length) >= 1, "the loss chart has lines")
  check((await page.textContent("#config")).includes("[selfplay]"), "the resolved config is shown")
  check(/generation \d+/.test(await page.textContent("#status")), "the status line says where the run is")
  check(await page.$eval("#elo-hint", (e) => e.hidden), "a run that rates its networks shows no rating hint")
  await shot(page, "dashboard.png")

  // Extend the run by one generation while the page is open: it must appear without a reload.
  const generations = timeline.length - 1
  execFileSync(args.bin, ["run", "--dir", args.run, "--generations", String(generations + 1)], {stdio: "ignore"})
  await page.waitForFunction((n) => document.querySelectorAll("#generations tbody tr").length === n,
    timeline.length + 1, {timeout: 60_000})
  check(true, `a generation finished while the page was open appeared without a reload (${timeline.length + 1} rows)`)
  await shot(page, "dashboard-live.png")

  // --- 2. Games -----------------------------------------------------------------------------
  const games = await context.newPage()
  await games.goto(`${args.url}games`)
  await games.waitForFunction(() => window.atomzeroViewer && window.atomzeroViewer.game, null, WAIT)
  const file = await games.evaluate(() => window.atomzeroViewer.file)
  check(file.startsWith("selfplay/"), `the viewer opens a self-play game (${file})`)
  // Pick the game of this shard with the earliest explosion.
  const count = await games.$$eval("#games div[data-index]", (d) => d.length)
  let target = null
  for (let i = 0; i < count && target === null; i++) {
    await games.click(`#games div[data-index="${i}"]`)
    await games.waitForFunction((i) => window.atomzeroViewer.index === i && window.atomzeroViewer.game.index === i, i, WAIT)
    const ply = await games.evaluate(() => window.atomzeroViewer.game.plies.findIndex((p) => p.explosion.length > 0))
    if (ply >= 0) target = ply + 1
  }
  check(target !== null, "a game with a capture was found")
  await games.click("#board")
  for (let ply = 1; ply <= target; ply++) {
    await games.keyboard.press("ArrowRight")
    await games.waitForFunction((ply) => {
      const current = document.querySelector("#moves .mv.current")
      return window.atomzeroViewer.ply === ply && current && Number(current.dataset.ply) === ply
    }, ply, WAIT)
  }
  check(true, `stepped to ply ${target} with the right-arrow key, the move list following`)
  await games.waitForSelector(".marker-explosion", WAIT)
  const exploded = await games.evaluate(() => window.atomzeroViewer.game.plies[window.atomzeroViewer.ply - 1].explosion)
  check((await games.textContent("#explosion")).includes(exploded[0]), `the explosion (${exploded.join(" ")}) is highlighted and named`)
  await games.evaluate(() => window.atomzeroViewer.settled)
  await shot(games, "games-explosion.png")
  await games.keyboard.press("ArrowLeft")
  await games.waitForFunction((ply) => window.atomzeroViewer.ply === ply, target - 1, WAIT)
  check(true, "the left-arrow key steps back")
  // A move with a recorded search: the policy list and arrows.
  const searched = await games.evaluate(() => window.atomzeroViewer.game.plies.findIndex((p) => p.search && p.search.policy.length > 1))
  check(searched >= 0, "the game has moves with a recorded search")
  await games.keyboard.press("Home")
  await games.waitForFunction(() => window.atomzeroViewer.ply === 0, null, WAIT)
  for (let ply = 1; ply <= searched; ply++) {
    await games.keyboard.press("ArrowRight")
    await games.waitForFunction((ply) => window.atomzeroViewer.ply === ply, ply, WAIT)
  }
  await games.waitForFunction(() => document.querySelectorAll("#search table.policy tr").length > 2, null, WAIT)
  check(await games.$$eval("#board .arrow", (a) => a.length) >= 1, "the policy target is listed and drawn as arrows")
  await games.evaluate(() => window.atomzeroViewer.settled)
  await shot(games, "games-search.png")
  await games.keyboard.press("End")
  const plies = await games.evaluate(() => window.atomzeroViewer.game.plies.length)
  await games.waitForFunction((n) => window.atomzeroViewer.ply === n, plies, WAIT)
  check(true, `End jumps to the last ply (${plies})`)
  // A gating game from a PGN.
  await games.click('#files div[data-file^="eval/gate-"]')
  await games.waitForFunction(() => window.atomzeroViewer.game && window.atomzeroViewer.game.file.startsWith("eval/gate-"), null, WAIT)
  await games.waitForSelector("#moves .mv[data-ply='1']", WAIT)
  await games.evaluate(() => window.atomzeroViewer.settled)
  await games.keyboard.press("ArrowRight")
  await games.waitForSelector("#moves .mv.current[data-ply='1']", WAIT)
  await games.evaluate(() => window.atomzeroViewer.settled)
  check((await games.textContent("#ply-info")).startsWith("after "), "a gating game (PGN) opens and steps")
  await shot(games, "games-gate.png")

  // --- 3. Play ------------------------------------------------------------------------------
  const play = await context.newPage()
  await play.goto(`${args.url}play`)
  await play.waitForFunction(() => document.querySelectorAll("#network option").length > 0, null, WAIT)
  const best = JSON.parse(fs.readFileSync(path.join(args.run, "models/best.json"), "utf8")).best.replace(".safetensors", "")
  check((await play.inputValue("#network")) === best, `the best network (${best}) is preselected`)
  await play.fill("#nodes", "8")
  await play.selectOption("#color", "white")
  await play.click("#start")
  await play.waitForFunction(() => window.atomzeroPlay.state && window.atomzeroPlay.state.legal.length > 0 && !window.atomzeroPlay.busy, null, WAIT)

  const centre = async (square) => {
    const box = await play.locator(`#board rect[data-square="${square}"]`).boundingBox()
    return [box.x + box.width / 2, box.y + box.height / 2]
  }
  const clickSquare = async (square) => {
    const [x, y] = await centre(square)
    await play.mouse.click(x, y)
  }
  // Picks up the piece on `from` (retrying until the legal-move markers show), then clicks `to`.
  const clickMove = async (from, to) => {
    for (let attempt = 0; ; attempt++) {
      await clickSquare(from)
      try {
        await play.waitForSelector("#board .marker-dot, #board .marker-bevel", {timeout: 3_000})
        break
      } catch (e) {
        if (attempt >= 5) throw new Error(`clicking ${from} did not pick up a piece`)
      }
    }
    await clickSquare(to)
  }

  // An illegal move first: the server's message is shown and the position stays.
  await clickMove("e2", "e5")
  await play.waitForFunction(() => document.querySelector("#message.error"), null, WAIT)
  const message = await play.textContent("#message")
  check(/not a legal move/.test(message), `an illegal move gets the server's message: "${message}"`)
  await shot(play, "play-illegal.png")

  let seed = 12345
  const random = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  let moves = 0
  for (; moves < 400; moves++) {
    const state = await play.evaluate(() => window.atomzeroPlay.state)
    if (state.result) break
    // Captures first (in atomic they end games quickly), else any move; promotions last.
    const occupied = new Set()
    state.fen.split(" ")[0].split("/").forEach((row, r) => {
      let file = 0
      for (const c of row) {
        if (/\d/.test(c)) { file += Number(c); continue }
        occupied.add("abcdefgh"[file] + (8 - r))
        file += 1
      }
    })
    const plain = state.legal.filter((u) => u.length === 4)
    const captures = plain.filter((u) => occupied.has(u.slice(2, 4)))
    const all = captures.length ? captures : plain.length ? plain : state.legal
    const uci = all[random(all.length)]
    await clickMove(uci.slice(0, 2), uci.slice(2, 4))
    if (uci.length === 5) {
      await play.waitForSelector('.promotion-dialog-button[data-piece$="q"]', WAIT)
      await play.click('.promotion-dialog-button[data-piece$="q"]')
    }
    const before = state.plies.length
    await play.waitForFunction((before) => {
      const s = window.atomzeroPlay.state
      return !window.atomzeroPlay.busy && (s.result || (s.plies.length >= before + 2 && s.legal.length > 0))
    }, before, WAIT)
  }
  const final = await play.evaluate(() => window.atomzeroPlay.state)
  check(Boolean(final.result), `the game was played to its end by clicking: ${final.result} (${final.termination}) after ${final.plies.length} plies, ${moves} of them clicked`)
  check((await play.textContent("#result")) === final.result, "the page shows the result")
  await play.evaluate(() => window.atomzeroPlay.settled)
  await shot(play, "play-result.png")
  const [download] = await Promise.all([play.waitForEvent("download", WAIT), play.click("#pgn-link")])
  const saved = path.join(args.shots, "played.pgn")
  await download.saveAs(saved)
  const pgn = fs.readFileSync(saved, "utf8")
  // PGN names: "Atomic" for atomic, the capitalised name for the other variants.
  const variantTag = `[Variant "${final.variant[0].toUpperCase()}${final.variant.slice(1)}"]`
  check(pgn.includes(variantTag) && pgn.includes(`[Result "${final.result}"]`), `the downloaded PGN has ${variantTag} and the result`)
  check(fs.readFileSync(path.join(args.run, final.pgn_file), "utf8") === pgn, `the game is saved in the run as ${final.pgn_file}`)

  // --- 4. The dashboard at a real run's size ------------------------------------------------
  if (args["big-url"]) {
    const big = await context.newPage()
    const n = Number(args["big-generations"])
    const pages = Math.ceil(n / 20)
    await big.goto(args["big-url"])
    await big.waitForFunction(() => document.querySelectorAll("#generations tbody tr").length > 0, null, WAIT)
    const shown = () => big.$$eval("#generations tbody tr", (trs) => trs.map((tr) => Number(tr.dataset.generation)))
    let rows = await shown()
    check(rows.length === 20 && rows[0] === n - 1 && rows[19] === n - 20,
      `a ${n}-generation run's table shows its newest 20 generations (${rows[0]}..${rows[19]})`)
    check((await big.textContent("#generations-page")) === `page 1 of ${pages}`, `the table is paged (page 1 of ${pages})`)
    const top = (selector) => big.$eval(selector, (e) => e.getBoundingClientRect().top + window.scrollY)
    const [now, elo, loss, table] = [await top("#status-card"), await top("#elo-chart"), await top("#loss-chart"), await top("#generations-card")]
    check(now < elo && elo < table && loss < table, `the now panel and the charts come before the table (${now} < ${elo}, ${loss} < ${table})`)
    const height = big.viewportSize().height
    check(elo + 260 <= height, `the Elo chart is on the first screen (it ends at ${elo + 260} px of ${height})`)
    await big.click("#generations-older")
    await big.waitForFunction(() => document.querySelector("#generations-page").textContent.startsWith("page 2 "), null, WAIT)
    rows = await shown()
    check(rows[0] === n - 21, `"older" shows the next page (from generation ${rows[0]})`)
    await big.click("#generations-last")
    await big.waitForFunction((p) => document.querySelector("#generations-page").textContent === `page ${p} of ${p}`, pages, WAIT)
    rows = await shown()
    check(rows[rows.length - 1] === 0 && rows.length === n - 20 * (pages - 1), `the last page ends at generation 0 (${rows.length} rows)`)
    const hint = await big.$eval("#elo-hint", (e) => (e.hidden ? "" : e.textContent))
    check(hint.includes("eval_games = 0") && hint.includes("atomzero gauntlet --run "),
      `a run without ratings says how to rate its networks: "${hint.slice(0, 80)}..."`)
    await big.click("#generations-first")
    await shot(big, "dashboard-big.png")
  }

  check(errors.length === 0, `no script errors in the pages${errors.length ? ": " + errors.join("; ") : ""}`)
  console.log(`serve-browser: ${passed} passed, 0 failed`)
} catch (e) {
  console.log(`serve-browser: ${passed} passed, 1 failed`)
  for (const page of context.pages()) {
    try { await page.screenshot({path: path.join(args.shots, `failure-${context.pages().indexOf(page)}.png`), fullPage: true}) } catch (_) { /* best effort */ }
  }
  console.error(e.stack || String(e))
  if (errors.length) console.error(`page errors: ${errors.join("; ")}`)
  process.exitCode = 1
} finally {
  await context.close()
  fs.rmSync(profile, {recursive: true, force: true})
}
