// A refusal's `fix` ({key, value}: set `key` to `value`, a TOML literal) applied to a policy's
// TOML text. The forms the host writes: a dotted key (`limits.fuel`, `http.allow_private`),
// an indexed one (`http.allow[0].methods`), and a new table in an array of tables
// (`[[http.allow]] url`: append `{url = value}` to `http.allow`).
import { parse, stringify } from "smol-toml";

/** Integers past 2^53 stay exact (as BigInt). */
const EXACT = { integersAsBigInt: "asNeeded" };

/** `text` with `fix` applied: the same policy, reformatted (comments are not kept). */
export function applyFix(text, fix) {
  const policy = parse(text, EXACT);
  const value = parse(`v = ${fix.value}`, EXACT).v;
  const table = /^\[\[([A-Za-z0-9_.-]+)\]\]\s+([A-Za-z0-9_-]+)$/.exec(fix.key.trim());
  if (table) {
    const [parent, name] = splitLast(table[1]);
    const holder = walk(policy, parent);
    const list = holder[name] ?? (holder[name] = []);
    if (!Array.isArray(list)) throw new Error(`${table[1]} is not an array of tables`);
    list.push({ [table[2]]: value });
  } else {
    const [parent, name] = splitLast(fix.key.trim());
    const holder = walk(policy, parent);
    holder[name] = merged(holder[name], value);
  }
  return stringify(policy);
}

/** An array value adds what the old one lacks (`allow_private`, a rule's `methods`). */
function merged(old, value) {
  if (Array.isArray(old) && Array.isArray(value)) {
    const key = (v) => stringify({ v });
    const seen = new Set(old.map(key));
    return [...old, ...value.filter((v) => !seen.has(key(v)))];
  }
  return value;
}

function splitLast(path) {
  const parts = path.split(".");
  return [parts.slice(0, -1), parts[parts.length - 1]];
}

/** The table at `parts` (`["http", "allow[0]"]`), made where missing. */
function walk(root, parts) {
  let node = root;
  for (const part of parts) {
    const indexed = /^(.+)\[(\d+)\]$/.exec(part);
    if (indexed) {
      const list = node[indexed[1]];
      if (!Array.isArray(list) || !list[Number(indexed[2])]) {
        throw new Error(`the policy has no ${part}`);
      }
      node = list[Number(indexed[2])];
    } else {
      node = node[part] ?? (node[part] = {});
    }
  }
  return node;
}
