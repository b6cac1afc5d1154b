// Building the page's nodes. Every string from the server or the person goes in as text
// (textContent, attributes by setAttribute): nothing here parses markup.

/** An element: `attrs` as attributes (`class`, `id`, `data-*`…) or `on*` listeners; each
 *  child a node or a string (as text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** Replace `node`'s children. */
export function fill(node, ...children) {
  node.replaceChildren();
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

export const $ = (selector) => document.querySelector(selector);

/** JSON for people: two-space indentation. */
export const pretty = (value) => JSON.stringify(value, null, 2);
