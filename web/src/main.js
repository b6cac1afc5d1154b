// The page of `palisade serve` (GET /): tabs, the key, and each tab's module.
import { key } from "./api.js";
import { $ } from "./dom.js";
import { loadApps, setupApps } from "./apps.js";
import { loadPolicies, setupRun } from "./run.js";
import { loadSessions, setupSessions } from "./sessions.js";

const TABS = { run: loadPolicies, sessions: loadSessions, apps: loadApps };

function show(tab) {
  for (const name of Object.keys(TABS)) {
    $(`#tab-${name}`).setAttribute("aria-selected", String(name === tab));
    $(`#${name}-view`).hidden = name !== tab;
  }
  return TABS[tab]();
}

function setupKey() {
  $("#key").value = key.get();
  $("#key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    key.set($("#key").value.trim());
    $("#key-state").textContent = key.get() ? "key kept for this tab" : "no key";
    const open = Object.keys(TABS).find((name) => !$(`#${name}-view`).hidden);
    show(open ?? "run");
  });
  $("#key-state").textContent = key.get() ? "key kept for this tab" : "no key";
}

setupKey();
setupRun();
setupSessions();
setupApps();
for (const name of Object.keys(TABS)) $(`#tab-${name}`).addEventListener("click", () => show(name));
show("run");
