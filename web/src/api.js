// The API, as every client calls it: the key the person typed goes in `Authorization`, kept
// in this tab's session storage, never in a URL.

const KEY = "palisade.key";

export const key = {
  get: () => sessionStorage.getItem(KEY) || "",
  set: (value) => (value ? sessionStorage.setItem(KEY, value) : sessionStorage.removeItem(KEY)),
};

function headers(extra = {}) {
  const h = { ...extra };
  const k = key.get();
  if (k) h.Authorization = `Bearer ${k}`;
  return h;
}

/** One request: `{status, ok, body}`, the body parsed as JSON when it is JSON, else text.
 *  A network failure is an answer too (status 0), so callers show it as any refusal. */
export async function call(method, path, body, extra = {}) {
  const init = { method, headers: headers(extra), cache: "no-store" };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    return { status: 0, ok: false, body: { error: { code: "unreachable", message: String(e) } } };
  }
  const type = response.headers.get("content-type") || "";
  const text = await response.text();
  let parsed = text;
  if (type.startsWith("application/json")) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: response.status, ok: response.ok, body: parsed };
}

/** Follow a server-sent event stream with the key in its headers (EventSource cannot send
 *  one): `onEvent({id, data})` for each event, until `signal` aborts. */
export async function follow(path, onEvent, signal) {
  const response = await fetch(path, { headers: headers({ Accept: "text/event-stream" }), signal });
  if (!response.ok || !response.body) {
    throw new Error(`the event stream answered ${response.status}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = { id: null, data: "" };
      for (const line of block.split("\n")) {
        if (line.startsWith("id:")) event.id = line.slice(3).trim();
        else if (line.startsWith("data:")) event.data += line.slice(5).trimStart();
      }
      if (event.data) onEvent(event);
    }
  }
}
