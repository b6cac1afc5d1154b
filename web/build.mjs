// Build the page into host/page/ (served from the binary by host/src/serve/page.rs):
// index.html and app.css as written, app.js bundled by esbuild from src/main.js with its npm
// packages (CodeMirror, smol-toml) at the versions package-lock.json pins. The same sources
// and lockfile give the same bytes. `--check` builds into a temporary folder and fails when
// a committed file differs (`make page` runs it).
import * as esbuild from "esbuild";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const committed = join(here, "..", "host", "page");
const check = process.argv.includes("--check");
const out = check ? mkdtempSync(join(tmpdir(), "palisade-page-")) : committed;

await esbuild.build({
  entryPoints: [join(here, "src", "main.js")],
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2022",
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
  outfile: join(out, "app.js"),
});
copyFileSync(join(here, "index.html"), join(out, "index.html"));
copyFileSync(join(here, "style.css"), join(out, "app.css"));

if (check) {
  const stale = ["index.html", "app.css", "app.js"].filter((file) => {
    let old;
    try {
      old = readFileSync(join(committed, file));
    } catch {
      return true;
    }
    return !old.equals(readFileSync(join(out, file)));
  });
  rmSync(out, { recursive: true, force: true });
  if (stale.length) {
    console.error(`host/page/${stale.join(", host/page/")} differ from what web/ builds to: run \`make page-build\` and commit`);
    process.exit(1);
  }
  console.log("page: host/page/ is what web/ builds to");
}
