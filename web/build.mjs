// Build the page's script into host/page/app.js (served from the binary by
// host/src/serve/page.rs, beside host/page/index.html and app.css, which are links to
// web/index.html and web/style.css): src/main.js bundled by esbuild with its npm packages
// (CodeMirror, smol-toml) at the versions package-lock.json pins. The same sources and
// lockfile give the same bytes. `--check` builds into a temporary folder and fails when the
// committed app.js differs (`make page` runs it).
import * as esbuild from "esbuild";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const committed = join(here, "..", "host", "page", "app.js");
const check = process.argv.includes("--check");
const out = check ? mkdtempSync(join(tmpdir(), "palisade-page-")) : null;

await esbuild.build({
  entryPoints: [join(here, "src", "main.js")],
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2022",
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
  outfile: check ? join(out, "app.js") : committed,
});

if (check) {
  let same = false;
  try {
    same = readFileSync(committed).equals(readFileSync(join(out, "app.js")));
  } catch {
    same = false;
  }
  rmSync(out, { recursive: true, force: true });
  if (!same) {
    console.error("host/page/app.js differs from what web/ builds to: run `make page-build` and commit it");
    process.exit(1);
  }
  console.log("page: host/page/app.js is what web/ builds to");
}
