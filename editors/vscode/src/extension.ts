// The gpulens extension: starts `gpulens serve` for Python files and the
// Python cells of notebooks, passes the `gpulens.*` settings to it, and shows
// the GPU the advice is tuned to in the status bar.

import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import type { Readable } from "node:stream";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

/** What `workspace/executeCommand gpulens.gpuProfile` answers. */
interface GpuReport {
  profile: GpuProfile | null;
  /** The target GPU named in the settings or pyproject.toml, if any. */
  target: string | null;
}

interface GpuProfile {
  source: "nvml" | "target" | "none";
  name?: string;
  compute_capability?: string;
  memory_bytes?: number;
  cuda_major?: number;
  architecture?: string;
  fp64_divisor?: number;
  tensor_core_types?: string[];
  memory_bandwidth_gbs?: number;
  device_count?: number;
}

const REPORT_URI = vscode.Uri.parse("gpulens-report:GPU%20report.md");

let client: LanguageClient | undefined;
let extensionRoot = "";
/** The executable the server runs from, and why that one. */
let server: ServerChoice | undefined;
let output: vscode.LogOutputChannel;
let statusItem: vscode.StatusBarItem;
let lastReport: GpuReport | undefined;
const reportChanged = new vscode.EventEmitter<vscode.Uri>();
let profileTimer: NodeJS.Timeout | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionRoot = context.extensionPath;
  output = vscode.window.createOutputChannel("gpulens", { log: true });
  statusItem = vscode.window.createStatusBarItem("gpulens.gpu", vscode.StatusBarAlignment.Right, 100);
  statusItem.name = "gpulens GPU";
  statusItem.command = "gpulens.showGpuReport";
  context.subscriptions.push(output, statusItem, reportChanged);

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider("gpulens-report", {
      onDidChange: reportChanged.event,
      provideTextDocumentContent: () => renderReport(lastReport),
    }),
    vscode.commands.registerCommand("gpulens.showGpuReport", showGpuReport),
    vscode.commands.registerCommand("gpulens.restartServer", restart),
    vscode.commands.registerCommand("gpulens.insertNotebookCell", insertNotebookCell),
    vscode.workspace.onDidChangeConfiguration(onConfigurationChanged),
    // Trusted now: a gpulens of the workspace's own may run instead of the bundled one.
    vscode.workspace.onDidGrantWorkspaceTrust(restart),
    { dispose: () => clearTimeout(profileTimer) },
  );

  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

/** The settings the server reads, with the keys it reads (see the server's settings.rs). */
function serverSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("gpulens");
  const settings: Record<string, unknown> = {
    inlayHints: config.get<boolean>("inlayHints", true),
  };
  // Leave out what is unset, so [tool.gpulens] in pyproject.toml still applies.
  const targetGpu = config.get<string>("targetGpu", "").trim();
  if (targetGpu) {
    settings.targetGpu = targetGpu;
  }
  const select = config.get<string[]>("select", []);
  if (select.length > 0) {
    settings.select = select;
  }
  const ignore = config.get<string[]>("ignore", []);
  if (ignore.length > 0) {
    settings.ignore = ignore;
  }
  const minElements = config.get<number | null>("minElements", null);
  if (typeof minElements === "number") {
    settings.minElements = minElements;
  }
  const profile = config.get<string>("profile", "").trim();
  if (profile) {
    settings.profile = profile;
    settings.profileThreshold = config.get<number>("profileThreshold", 0.01);
    settings.profileBelow = config.get<string>("profileBelow", "keep");
  }
  return settings;
}

/** Where the server's executable was found. */
type ServerSource = "setting" | "environment" | "PATH" | "bundled";

interface ServerChoice {
  path: string;
  source: ServerSource;
}

const SOURCE_LABELS: Record<ServerSource, string> = {
  setting: "the gpulens.path setting",
  environment: "the workspace's Python environment",
  PATH: "PATH",
  bundled: "bundled with the extension",
};

const EXECUTABLE = process.platform === "win32" ? "gpulens.exe" : "gpulens";

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The gpulens to run, in this order: the gpulens.path setting, a gpulens in
 * the workspace's Python environment (a .venv, venv or env folder, or the
 * environment VS Code was started in), the first on PATH, the one bundled
 * with the extension. In an untrusted workspace only the bundled one runs:
 * the others are programs the workspace (or its settings) could name.
 */
function findServer(): ServerChoice | undefined {
  const bundled = path.join(extensionRoot, "bin", EXECUTABLE);
  const haveBundled = isExecutable(bundled);
  if (!vscode.workspace.isTrusted) {
    return haveBundled ? { path: bundled, source: "bundled" } : undefined;
  }
  const setting = vscode.workspace.getConfiguration("gpulens").get<string>("path", "").trim();
  if (setting) {
    return { path: setting, source: "setting" };
  }
  const scripts = process.platform === "win32" ? "Scripts" : "bin";
  const environments: string[] = [];
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    for (const name of [".venv", "venv", "env"]) {
      environments.push(path.join(folder.uri.fsPath, name));
    }
  }
  for (const variable of ["VIRTUAL_ENV", "CONDA_PREFIX"]) {
    const prefix = process.env[variable];
    if (prefix) {
      environments.push(prefix);
    }
  }
  for (const prefix of environments) {
    const candidate = path.join(prefix, scripts, EXECUTABLE);
    if (isExecutable(candidate)) {
      return { path: candidate, source: "environment" };
    }
  }
  for (const folder of (process.env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(folder, EXECUTABLE);
    if (isExecutable(candidate)) {
      return { path: candidate, source: "PATH" };
    }
  }
  return haveBundled ? { path: bundled, source: "bundled" } : undefined;
}

async function start(): Promise<void> {
  const config = vscode.workspace.getConfiguration("gpulens");
  server = findServer();
  if (!server) {
    const why = vscode.workspace.isTrusted
      ? "no gpulens executable: none is set in gpulens.path, in the workspace's Python environment or on PATH, and this extension carries none"
      : "this workspace is not trusted, so only a gpulens bundled with the extension may run, and this extension carries none";
    output.error(`gpulens: ${why}`);
    setStatus("$(error) gpulens", `gpulens did not start: ${why}.`);
    void vscode.window.showErrorMessage(`gpulens: ${why}. Install it (uv tool install gpulens) or set gpulens.path.`);
    return;
  }
  const command = server.path;
  output.info(`gpulens: running ${command} (from ${SOURCE_LABELS[server.source]})`);
  const env = { ...process.env, GPULENS_LOG: config.get<string>("logLevel", "info") };
  // TransportKind.stdio appends `--stdio`, which `gpulens serve` accepts.
  const serverOptions: ServerOptions = {
    command,
    args: ["serve"],
    transport: TransportKind.stdio,
    options: { env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      { scheme: "vscode-notebook-cell", language: "python" },
    ],
    initializationOptions: serverSettings(),
    outputChannel: output,
    stdioOptions: { stdout: forwardServerLog, stderr: forwardServerLog },
  };
  client = new LanguageClient("gpulens", "gpulens", serverOptions, clientOptions);
  // Tells the server this client inserts notebook cells for it (LSP has no
  // notebook edit): its "first cell" actions then run gpulens.insertNotebookCell.
  client.registerFeature({
    fillClientCapabilities(capabilities) {
      capabilities.experimental = { ...(capabilities.experimental ?? {}), gpulens: { insertNotebookCell: true } };
    },
    initialize() {},
    getState: () => ({ kind: "static" }),
    clear() {},
  });
  setStatus("$(loading~spin) gpulens", "Starting the gpulens language server");
  try {
    await client.start();
  } catch (error) {
    client = undefined;
    setStatus("$(error) gpulens", `gpulens did not start: ${describe(error)}`);
    const hint =
      server.source === "setting"
        ? `Check the gpulens.path setting (${command}).`
        : `It was found in ${SOURCE_LABELS[server.source]}; set gpulens.path to another executable.`;
    const choice = await vscode.window.showErrorMessage(
      `gpulens: could not start \`${command} serve\`: ${describe(error)}. ${hint}`,
      "Open Settings",
    );
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "gpulens.path");
    }
    return;
  }
  await refreshProfile();
  // The server asks NVML for the attached GPU in the background after it
  // starts; look again once that has had time to finish.
  clearTimeout(profileTimer);
  profileTimer = setTimeout(() => void refreshProfile(), 3000);
}

async function stop(): Promise<void> {
  clearTimeout(profileTimer);
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.stop();
    } catch (error) {
      output.warn(`gpulens: stopping the server: ${describe(error)}`);
    }
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

async function onConfigurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
  if (!event.affectsConfiguration("gpulens")) {
    return;
  }
  // The executable and its log level are fixed when the server starts.
  if (event.affectsConfiguration("gpulens.path") || event.affectsConfiguration("gpulens.logLevel")) {
    await restart();
    return;
  }
  if (client?.isRunning()) {
    await client.sendNotification(DidChangeConfigurationNotification.type, { settings: serverSettings() });
    await refreshProfile();
  }
}

/** Asks the server which GPU its advice is for and shows it in the status bar. */
async function refreshProfile(): Promise<GpuReport | undefined> {
  if (!client?.isRunning()) {
    return undefined;
  }
  try {
    const report = (await client.sendRequest(ExecuteCommandRequest.type, {
      command: "gpulens.gpuProfile",
      arguments: [],
    })) as GpuReport | null;
    lastReport = report ?? undefined;
  } catch (error) {
    output.warn(`gpulens: asking for the GPU profile: ${describe(error)}`);
    return undefined;
  }
  const profile = lastReport?.profile;
  const running = server ? `\n\nServer: ${server.path} (${SOURCE_LABELS[server.source]}).` : "";
  if (!profile || profile.source === "none" || !profile.name) {
    setStatus("$(circuit-board) gpulens: no GPU", `gpulens: no NVIDIA GPU found, so the advice is generic. Set gpulens.targetGpu to tune it to the GPU your code will run on.${running}\n\nClick for the GPU report.`);
  } else {
    const suffix = profile.source === "target" ? " (target)" : "";
    const name = profile.name.replace(/^NVIDIA /, "");
    setStatus(`$(circuit-board) ${name}${suffix}`, `gpulens advice is tuned to ${profile.name}${suffix}.${running}\n\nClick for the GPU report.`);
  }
  reportChanged.fire(REPORT_URI);
  return lastReport;
}

async function showGpuReport(): Promise<void> {
  if (!client?.isRunning()) {
    const choice = await vscode.window.showWarningMessage("gpulens: the server is not running.", "Restart server");
    if (choice === "Restart server") {
      await restart();
    }
    if (!client?.isRunning()) {
      return;
    }
  }
  await refreshProfile();
  const document = await vscode.workspace.openTextDocument(REPORT_URI);
  await vscode.languages.setTextDocumentLanguage(document, "markdown");
  await vscode.window.showTextDocument(document, { preview: true });
}

function renderReport(report: GpuReport | undefined): string {
  const lines = ["# gpulens: the GPU the advice is for", ""];
  const profile = report?.profile;
  if (!profile || profile.source === "none" || !profile.name) {
    lines.push(
      "No NVIDIA GPU was found (no driver, or no device), and no target GPU is set, so the advice is generic.",
      "",
      "Set `gpulens.targetGpu` (or `target-gpu` under `[tool.gpulens]` in pyproject.toml) to the GPU your code will run on, such as `H200` or `T4`.",
    );
    if (report?.target) {
      lines.push("", `The target GPU \`${report.target}\` is not one gpulens knows; see the server log.`);
    }
    return lines.join("\n") + "\n";
  }
  const source = profile.source === "nvml" ? "attached (NVML)" : "target (from the settings)";
  const rows: [string, string | undefined][] = [
    ["GPU", profile.name],
    ["source", source],
    ["devices", profile.device_count?.toString()],
    ["compute capability", profile.compute_capability],
    ["architecture", profile.architecture],
    ["memory", profile.memory_bytes === undefined ? undefined : `${(profile.memory_bytes / 1e9).toFixed(1)} GB`],
    ["memory bandwidth", profile.memory_bandwidth_gbs === undefined ? undefined : `${profile.memory_bandwidth_gbs} GB/s`],
    ["FP64 rate", profile.fp64_divisor === undefined ? undefined : `1/${profile.fp64_divisor} of FP32`],
    ["tensor cores", profile.tensor_core_types?.length ? profile.tensor_core_types.join(", ") : undefined],
    ["CUDA (driver)", profile.cuda_major === undefined ? undefined : `${profile.cuda_major}.x`],
  ];
  lines.push("| | |", "| --- | --- |");
  for (const [label, value] of rows) {
    if (value !== undefined && value !== "") {
      lines.push(`| ${label} | ${value} |`);
    }
  }
  if (report?.target) {
    lines.push("", `Target GPU setting: \`${report.target}\`.`);
  }
  return lines.join("\n") + "\n";
}

// The server logs to stderr as `2026-01-02T03:04:05.678Z  INFO target: message`.
const SERVER_LOG_LINE = /^\S+Z\s+(TRACE|DEBUG|INFO|WARN|ERROR)\s+(?:\S+:\s)?(.*)$/;

/** Puts each line the server logs in the output channel at the level it was logged at. */
function forwardServerLog(input: Readable, channel: vscode.LogOutputChannel): void {
  let level = "INFO";
  const lines = readline.createInterface({ input, crlfDelay: Infinity, terminal: false });
  lines.on("line", (line) => {
    const match = SERVER_LOG_LINE.exec(line);
    let message = line;
    if (match) {
      level = match[1];
      message = match[2];
    } // else: a continuation of the previous entry (a backtrace), at its level
    // gpulens.logLevel decides what the server writes; show all of it, even
    // when the channel's own level would hide debug lines.
    const hidden = (wanted: vscode.LogLevel) => channel.logLevel === vscode.LogLevel.Off || channel.logLevel > wanted;
    switch (level) {
      case "TRACE":
        hidden(vscode.LogLevel.Trace) ? channel.info(`(trace) ${message}`) : channel.trace(message);
        break;
      case "DEBUG":
        hidden(vscode.LogLevel.Debug) ? channel.info(`(debug) ${message}`) : channel.debug(message);
        break;
      case "WARN":
        channel.warn(message);
        break;
      case "ERROR":
        channel.error(message);
        break;
      default:
        channel.info(message);
    }
  });
}

/**
 * The server's "first cell" code action (`%load_ext cudf.pandas`): inserts a
 * Python code cell holding `text` at `index` of the open notebook `notebookUri`.
 */
async function insertNotebookCell(notebookUri: string, index: number, text: string): Promise<boolean> {
  const wanted = vscode.Uri.parse(notebookUri).toString();
  const notebook = vscode.workspace.notebookDocuments.find((n) => n.uri.toString() === wanted);
  if (!notebook) {
    output.warn(`gpulens: no open notebook ${notebookUri} to insert a cell into`);
    return false;
  }
  const cell = new vscode.NotebookCellData(vscode.NotebookCellKind.Code, text, "python");
  const edit = new vscode.WorkspaceEdit();
  edit.set(notebook.uri, [vscode.NotebookEdit.insertCells(Math.min(index, notebook.cellCount), [cell])]);
  return vscode.workspace.applyEdit(edit);
}

function setStatus(text: string, tooltip: string): void {
  statusItem.text = text;
  statusItem.tooltip = tooltip;
  statusItem.show();
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
