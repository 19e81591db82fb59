// Shared by the three pages: the JSON API, live updates (server-sent events), small DOM helpers.

/** Fetches `path` and returns its JSON; a 4xx/5xx answer throws an Error with the server's message. */
export async function api(path, options = {}) {
  const response = await fetch(path, options)
  let body = null
  try { body = await response.json() } catch (e) { body = null }
  if (!response.ok) {
    throw new Error(body && body.error ? body.error : `${response.status} ${response.statusText}`)
  }
  return body
}

/** POSTs `value` as JSON. */
export function post(path, value) {
  return api(path, {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: value === undefined ? undefined : JSON.stringify(value),
  })
}

/** Calls `callback` once now and again whenever the run directory changes. */
export function onRunChange(callback) {
  const live = document.getElementById("live")
  const source = new EventSource("/api/events")
  source.addEventListener("run", (event) => {
    if (live) { live.textContent = "live"; live.className = "on" }
    callback(Number(event.data))
  })
  source.onerror = () => { if (live) { live.textContent = "reconnecting"; live.className = "" } }
  return source
}

/** Creates an element: el("td", {class: "x"}, "text", child, ...). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value)
    else node.setAttribute(key, value)
  }
  for (const child of children) {
    if (child === undefined || child === null) continue
    node.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return node
}

/** `1234.5` -> "1,235"; undefined -> "–". */
export function num(value, digits = 0) {
  if (value === undefined || value === null || Number.isNaN(value)) return "–"
  return Number(value).toLocaleString("en-US", {minimumFractionDigits: digits, maximumFractionDigits: digits})
}

/** Seconds as "3 s", "4.2 min", "1.5 h". */
export function duration(secs) {
  if (secs === undefined || secs === null) return "–"
  if (secs < 90) return `${Math.round(secs)} s`
  if (secs < 5400) return `${(secs / 60).toFixed(1)} min`
  return `${(secs / 3600).toFixed(1)} h`
}

/** Shows the run's name in the header. */
export async function showRunName() {
  try {
    const s = await api("/api/networks")
    const node = document.getElementById("variant")
    if (node) node.textContent = s.variant
  } catch (e) { /* the page shows its own errors */ }
}
