// VS Code for real: code-server with the packaged gpulens extension, driven
// through Debian's Chromium by playwright-core, as a person would — open a
// Python file, see gpulens in the Problems panel, apply a quick fix from
// Ctrl+., save, and check the file on disk. A screenshot is taken at each step.
//
// Run by `tests/editors/run vscode`, which installs what this needs and sets:
//   GPULENS_BIN, GPULENS_VSIX, GPULENS_EXAMPLE (the Python file to copy),
//   GPULENS_VSCODE_MODULES (node_modules with code-server and playwright-core),
//   GPULENS_VSCODE_WORK (a scratch folder), GPULENS_SCREENSHOTS (where the PNGs go).

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const bin = env("GPULENS_BIN");
const vsix = env("GPULENS_VSIX");
const example = env("GPULENS_EXAMPLE");
const modules = env("GPULENS_VSCODE_MODULES");
const work = env("GPULENS_VSCODE_WORK");
const shots = env("GPULENS_SCREENSHOTS");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";

const require = createRequire(path.join(modules, "noop.js"));
const { chromium } = require("playwright-core");
const codeServer = path.join(modules, ".bin", "code-server");

// The finding the test disables: CUML002 on `Ridge(..., positive=True)`, an
// "info" diagnostic (VS Code leaves hints out of the Problems panel).
const CODE = "CUML002";
const FIX_LABEL = `Disable ${CODE} for this line`;
const file = path.join(work, "workspace", path.basename(example));

const started = Date.now();
const log = (message) => console.log(`vscode [${((Date.now() - started) / 1000).toFixed(1)} s]: ${message}`);

fs.rmSync(work, { recursive: true, force: true });
fs.rmSync(shots, { recursive: true, force: true });
for (const dir of ["home", "user-data/User", "user-data/Machine", "extensions", "workspace", "chromium"]) {
  fs.mkdirSync(path.join(work, dir), { recursive: true });
}
fs.mkdirSync(shots, { recursive: true });
fs.copyFileSync(example, file);
const original = fs.readFileSync(file, "utf8");
const originalLines = original.split("\n");
// A notebook whose second cell groups the table its first cell reads: its
// finding (CUDF002) needs the name from the cell before.
const notebook = path.join(work, "workspace", "sales.ipynb");
const NOTEBOOK_CODE = "CUDF002";
const codeCell = (source) => ({ cell_type: "code", execution_count: null, metadata: {}, outputs: [], source });
fs.writeFileSync(
  notebook,
  JSON.stringify({
    cells: [
      codeCell(["import pandas as pd\n", "\n", "sales = pd.read_parquet('sales.parquet')"]),
      { cell_type: "markdown", metadata: {}, source: ["Totals per store"] },
      codeCell(["totals = sales.groupby('store').agg({'amount': 'sum'})"]),
    ],
    metadata: { language_info: { name: "python" } },
    nbformat: 4,
    nbformat_minor: 5,
  }),
);
const targetIndex = originalLines.findIndex((line) => /Ridge\(.*positive=True/.test(line));
if (targetIndex < 0) throw new Error(`${example} has no Ridge(..., positive=True) line for ${CODE}`);
const targetColumn = originalLines[targetIndex].indexOf("Ridge(") + 1;
const expected = originalLines
  .map((line, i) => (i === targetIndex ? `${line}  # gpulens: ignore[${CODE}]` : line))
  .join("\n");

// No gpulens.path and no gpulens on PATH: the platform .vsix runs the
// executable it carries. (gpulens.logLevel is a machine setting: in
// code-server, a remote window, it goes in the remote machine's settings.)
fs.writeFileSync(
  path.join(work, "user-data/Machine/settings.json"),
  JSON.stringify({ "gpulens.logLevel": "debug" }, null, 2),
);
for (const folder of (process.env.PATH || "").split(path.delimiter)) {
  if (folder && fs.existsSync(path.join(folder, "gpulens"))) throw new Error(`gpulens is on PATH (${folder}): the test is of the bundled one`);
}
fs.writeFileSync(
  path.join(work, "user-data/User/settings.json"),
  JSON.stringify(
    {
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "workbench.enableExperiments": false,
      "security.workspace.trust.enabled": false,
      "telemetry.telemetryLevel": "off",
      "update.mode": "none",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "extensions.ignoreRecommendations": true,
      "chat.disableAIFeatures": true,
      "git.enabled": false,
      "git.openRepositoryInParentFolders": "never",
      "files.autoSave": "off",
    },
    null,
    2,
  ),
);
const config = path.join(work, "config.yaml");
fs.writeFileSync(config, "auth: none\ncert: false\n");
const childEnv = { ...process.env, HOME: path.join(work, "home"), XDG_CONFIG_HOME: path.join(work, "home/.config") };
const common = ["--config", config, "--user-data-dir", path.join(work, "user-data"), "--extensions-dir", path.join(work, "extensions")];

log(`installing ${path.basename(vsix)}`);
const install = spawnSync(codeServer, [...common, "--install-extension", vsix], { env: childEnv, encoding: "utf8" });
if (install.status !== 0) {
  throw new Error(`code-server --install-extension failed (${install.status}):\n${install.stdout}\n${install.stderr}`);
}

const port = await new Promise((resolve, reject) => {
  const server = net.createServer();
  server.once("error", reject);
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});

const serverLog = fs.openSync(path.join(work, "code-server.log"), "w");
const server = spawn(
  codeServer,
  [
    ...common,
    "--auth", "none",
    "--bind-addr", `127.0.0.1:${port}`,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    path.join(work, "workspace"),
  ],
  { env: childEnv, detached: true, stdio: ["ignore", serverLog, serverLog] },
);

let context;
let page;
let step = 0;

async function screenshot(name) {
  step += 1;
  const target = path.join(shots, `${String(step).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path: target });
  log(`screenshot ${path.basename(target)}`);
}

async function until(what, predicate, timeout = 60000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Opens a file of the workspace through Quick Open (Ctrl+P). */
async function quickOpen(name) {
  await page.keyboard.press("Control+P");
  await page.waitForSelector(".quick-input-widget input", { state: "visible" });
  await page.keyboard.type(name);
  await until(`Quick Open to list ${name}`, async () =>
    (await page.locator(".quick-input-list .monaco-list-row").allInnerTexts().catch(() => [])).some((t) => t.includes(name)),
  );
  await page.keyboard.press("Enter");
  await page.waitForSelector(".quick-input-widget", { state: "hidden" });
}

/** The quick fix menu (Ctrl+.). */
const menu = ".action-widget";

/** Opens the quick fixes at the cursor (Ctrl+.) and waits for `label` among them; logs them as `what`. */
async function openQuickFixes(label, what) {
  await page.keyboard.press("Control+.");
  await page.waitForSelector(`${menu} .monaco-list-row`, { state: "visible", timeout: 30000 });
  await until(`"${label}" in the quick fix menu`, async () =>
    (await page.locator(`${menu} .monaco-list-row`).allInnerTexts()).some((t) => t.includes(label)),
  );
  const entries = await page.locator(`${menu} .monaco-list-row`).allInnerTexts();
  log(`${what}: ${JSON.stringify(entries.map((t) => t.trim()).filter(Boolean))}`);
}

/** Focuses the open menu's entry `label` with the keyboard (the menu swallows clicks). */
async function focusQuickFix(label) {
  await until(`"${label}" to be focused`, async () => {
    const focused = await page.locator(`${menu} .monaco-list-row.focused`).innerText().catch(() => "");
    if (focused.includes(label)) return true;
    await page.keyboard.press("ArrowDown");
    await page.waitForTimeout(100);
    return false;
  }, 15000);
}

function stopServer() {
  // code-server's children (the extension host, file watchers, gpulens) share its process group.
  try {
    process.kill(-server.pid, "SIGTERM");
  } catch {}
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    try {
      process.kill(-server.pid, 0);
    } catch {
      return;
    }
    spawnSync("sleep", ["0.2"]);
  }
  try {
    process.kill(-server.pid, "SIGKILL");
  } catch {}
}

function tail(file, lines = 40) {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "(none)";
  }
}

function findFiles(dir, test, found = []) {
  for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) findFiles(full, test, found);
    else if (test(full)) found.push(full);
  }
  return found;
}

async function main() {
  await until("code-server to listen", async () => {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      return response.ok;
    } catch {
      return false;
    }
  });
  log(`code-server is up on port ${port}`);

  context = await chromium.launchPersistentContext(path.join(work, "chromium"), {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1600, height: 1000 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(path.join(work, "workspace"))}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 60000 });
  await page.waitForSelector(".explorer-folders-view, .explorer-viewlet", { timeout: 60000 }).catch(() => {});
  await page.waitForTimeout(1500);
  await screenshot("workbench");

  // Open the file through Quick Open.
  await quickOpen(path.basename(file));
  await page.waitForSelector(`.tab[data-resource-name="${path.basename(file)}"], .tab:has-text("${path.basename(file)}")`);
  log("file open; waiting for gpulens diagnostics");
  await page.waitForSelector(".squiggly-info, .squiggly-warning, .squiggly-hint", { timeout: 60000 });
  await until("the gpulens status bar item", async () => {
    const items = await page.locator(".statusbar-item").allInnerTexts();
    return items.find((text) => text.includes("gpulens") || text.includes("GPU"));
  });
  const status = (await page.locator(".statusbar-item").allInnerTexts()).find((t) => t.includes("gpulens"));
  log(`status bar: ${JSON.stringify(status)}`);
  // The extension says which gpulens it runs: the one it carries.
  const used = await until("the extension's log to name the server it runs", async () => {
    for (const file of findFiles(path.join(work, "user-data", "logs"), (f) => /gpulens\.log$/.test(f))) {
      const line = fs.readFileSync(file, "utf8").split("\n").find((l) => l.includes("gpulens: running "));
      if (line) return line;
    }
    return undefined;
  });
  log(`extension log: ${used.trim()}`);
  if (!used.includes("(from bundled with the extension)") || !used.includes(path.join("extensions", ""))) {
    throw new Error(`the extension does not run its bundled gpulens: ${used}`);
  }
  await screenshot("diagnostics");

  // The Problems panel lists the finding.
  await page.keyboard.press("Control+Shift+M");
  const problem = await until(`${CODE} in the Problems panel`, async () => {
    const rows = await page.locator(".markers-panel .monaco-list-row").allInnerTexts().catch(() => []);
    return rows.find((row) => row.includes(CODE));
  });
  log(`Problems panel: ${JSON.stringify(problem.replace(/\s+/g, " ").slice(0, 160))}`);
  await screenshot("problems");

  // Put the cursor on the finding and open the quick fixes with Ctrl+.
  await page.keyboard.press("Control+1");
  await page.keyboard.press("Control+G");
  await page.waitForSelector(".quick-input-widget input", { state: "visible" });
  await page.keyboard.type(`${targetIndex + 1}:${targetColumn}`);
  await page.keyboard.press("Enter");
  await page.waitForTimeout(500);
  await openQuickFixes(FIX_LABEL, "quick fixes");
  await screenshot("quick-fix-menu");
  await focusQuickFix(FIX_LABEL);
  await page.keyboard.press("Enter");
  await page.waitForSelector(menu, { state: "hidden" }).catch(() => {});
  await until("the suppression comment in the editor", async () =>
    (await page.locator(".editor-instance .view-lines").first().innerText()).replace(/\u00a0/g, " ").includes(`# gpulens: ignore[${CODE}]`),
  );
  await screenshot("fix-applied");

  await page.keyboard.press("Control+S");
  await until("the file to be saved", () => fs.readFileSync(file, "utf8") !== original, 20000);
  await page.waitForTimeout(500);
  await screenshot("saved");
  const saved = fs.readFileSync(file, "utf8");
  if (saved !== expected) {
    const got = saved.split("\n");
    const first = got.findIndex((line, i) => line !== expected.split("\n")[i]);
    throw new Error(
      `the saved file is not the example with line ${targetIndex + 1} disabled; first difference on line ${first + 1}:\n` +
        `  got:      ${JSON.stringify(got[first])}\n  expected: ${JSON.stringify(expected.split("\n")[first])}`,
    );
  }
  log(`saved file on disk: line ${targetIndex + 1} now ends with "# gpulens: ignore[${CODE}]", the rest unchanged`);

  // The command palette has the extension's commands; the report opens.
  await page.keyboard.press("Control+Shift+P");
  await page.waitForSelector(".quick-input-widget input", { state: "visible" });
  await page.keyboard.type("gpulens: Show GPU report");
  await until("the Show GPU report command", async () =>
    (await page.locator(".quick-input-list .monaco-list-row").allInnerTexts().catch(() => [])).some((t) => t.includes("Show GPU report")),
  );
  await page.keyboard.press("Enter");
  await page.waitForSelector(".quick-input-widget", { state: "hidden" });
  await until("the GPU report to open", async () =>
    (await page.locator(".editor-instance .view-lines:visible").allInnerTexts().catch(() => [])).some((t) => t.replace(/\u00a0/g, " ").includes("gpulens: the GPU the advice is for")),
  );
  await screenshot("gpu-report");

  // A notebook: the cells are one module (the finding in the third cell
  // needs the table the first one read).
  await quickOpen(path.basename(notebook));
  await page.waitForSelector(".notebook-editor .cell-editor-container", { timeout: 60000 });
  const cellEditors = ".notebook-editor .cell-editor-container .monaco-editor";
  const cellTexts = async () =>
    (await page.locator(`${cellEditors} .view-lines`).allInnerTexts()).map((t) => t.replace(/\u00a0/g, " "));
  // (Its findings are hints, which VS Code marks in the text but leaves out of the Problems panel.)
  const groupCell = async () => (await cellTexts()).findIndex((t) => t.includes("groupby"));
  await until(`${NOTEBOOK_CODE} marked in the grouping cell`, async () => {
    const index = await groupCell();
    return index >= 0 && (await page.locator(cellEditors).nth(index).locator(".squiggly-hint").count()) > 0;
  });
  log(`notebook: ${NOTEBOOK_CODE} marked in the grouping cell`);
  await screenshot("notebook");

  // Quick fixes on the grouping cell: put the cursor on the line and press Ctrl+.
  async function cellQuickFix(cellText, label) {
    const index = (await cellTexts()).findIndex((t) => t.includes(cellText));
    if (index < 0) throw new Error(`no cell holds ${cellText}: ${JSON.stringify(await cellTexts())}`);
    await page.locator(cellEditors).nth(index).locator(".view-lines").click();
    // Twelve characters into the cell's last line: inside `pd.read_parquet(...)`, `sales.groupby(...)`.
    await page.keyboard.press("Control+End");
    await page.keyboard.press("Home");
    for (let i = 0; i < 12; i++) await page.keyboard.press("ArrowRight");
    await page.waitForTimeout(500);
    await openQuickFixes(label, "cell quick fixes");
    await focusQuickFix(label);
  }

  // A quick fix inside a cell: the read's finding disabled on its line.
  await cellQuickFix("read_parquet", "Disable CUDF001 for this line");
  await page.keyboard.press("Enter");
  await page.waitForSelector(menu, { state: "hidden" }).catch(() => {});
  await until("the suppression comment in the cell", async () =>
    (await cellTexts()).some((t) => t.includes("# gpulens: ignore[CUDF001]")),
  );
  await screenshot("notebook-fix-applied");

  // "Run pandas on the GPU": a first cell with the magic, inserted by the
  // extension; with cudf.pandas on, the grouping is no longer advice.
  const MAGIC = "%load_ext cudf.pandas";
  await cellQuickFix("groupby", MAGIC);
  await screenshot("notebook-quick-fix-menu");
  await page.keyboard.press("Enter");
  await page.waitForSelector(menu, { state: "hidden" }).catch(() => {});
  await until("the magic in a new first cell", async () => (await cellTexts())[0]?.trim() === MAGIC);
  await until(`${NOTEBOOK_CODE} gone from the grouping cell`, async () => {
    const index = await groupCell();
    return index >= 0 && (await page.locator(cellEditors).nth(index).locator(".squiggly-hint").count()) === 0;
  });
  await screenshot("notebook-first-cell");

  const before = fs.readFileSync(notebook, "utf8");
  await page.keyboard.press("Control+S");
  await until("the notebook to be saved", () => fs.readFileSync(notebook, "utf8") !== before, 20000);
  const cells = JSON.parse(fs.readFileSync(notebook, "utf8")).cells;
  const sources = cells.map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source));
  if (sources.length !== 4 || sources[0] !== MAGIC || cells[0].cell_type !== "code") {
    throw new Error(`the saved notebook does not start with a ${MAGIC} cell: ${JSON.stringify(sources)}`);
  }
  if (!sources[1].endsWith("# gpulens: ignore[CUDF001]")) {
    throw new Error(`the reading cell was not fixed: ${JSON.stringify(sources[1])}`);
  }
  log(`saved notebook: a first cell ${JSON.stringify(sources[0])}, and CUDF001 disabled in the reading cell`);
  await screenshot("notebook-saved");
}

let failed;
try {
  await main();
} catch (error) {
  failed = error;
  if (page) await screenshot("failure").catch(() => {});
} finally {
  await context?.close().catch(() => {});
  stopServer();
}

if (failed) {
  console.error(`vscode: FAILED: ${failed.stack || failed}`);
  console.error(`--- code-server log (${path.join(work, "code-server.log")})\n${tail(path.join(work, "code-server.log"))}`);
  for (const logFile of findFiles(path.join(work, "user-data", "logs"), (f) => /gpulens|exthost\.log$/i.test(f))) {
    console.error(`--- ${logFile}\n${tail(logFile)}`);
  }
  console.error(`--- screenshots in ${shots}`);
  process.exit(1);
}
log("passed");
