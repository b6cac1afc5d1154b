// An HTTP handler that calls `fetch`: it asks the upstream named by `?url=` and answers with
// the upstream's status and the length of its body. Build it with a policy that has an
// `[http]` table (`palisade build --http --policy P examples/http/proxy.js -o proxy.wasm`), or
// its `fetch` is refused with a `PolicyDeniedError`, which it turns into a 403.
export default {
  async fetch(request) {
    const target = new URL(request.url).searchParams.get("url");
    if (!target) return new Response("pass ?url=", { status: 400 });
    try {
      const upstream = await fetch(target);
      const text = await upstream.text();
      return Response.json({ status: upstream.status, length: text.length, body: text.slice(0, 200) });
    } catch (error) {
      const status = error instanceof PolicyDeniedError ? 403 : 502;
      return Response.json({ error: error.name, message: error.message }, { status });
    }
  },
};
