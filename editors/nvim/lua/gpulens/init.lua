-- gpulens for Neovim: starts `gpulens serve` for Python buffers.
--
--   require("gpulens").setup({
--     cmd = { "gpulens", "serve" },          -- the server command (default)
--     settings = { targetGpu = "H200" },     -- sent as init_options and settings
--   })
--
-- On Neovim 0.11+ the server is registered with vim.lsp.config/vim.lsp.enable;
-- on 0.8–0.10 vim.lsp.start attaches it from a FileType autocmd; on 0.7
-- vim.lsp.start_client + vim.lsp.buf_attach_client do, with one client per
-- project root. `:GpulensGpu` shows the GPU the advice is tuned to.

local M = {}

local NAME = "gpulens"

local defaults = {
  cmd = { "gpulens", "serve" },
  -- Settings the server reads: select, ignore, targetGpu, inlayHints, minElements.
  settings = {},
  filetypes = { "python" },
  -- The first of these found above a file marks its project root
  -- (where the server reads [tool.gpulens] from pyproject.toml).
  root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" },
  -- Extra fields for the client configuration (on_attach, capabilities, …).
  client = {},
}

M.config = nil

local has = function(feature)
  return vim.fn.has(feature) == 1
end

-- Neovim 0.11 wants method calls (client:request); 0.7–0.10 want client.request.
local function request(client, method, params, handler, bufnr)
  if has("nvim-0.11") then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- The running gpulens clients, attached to `bufnr` when given.
function M.clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = NAME, bufnr = bufnr })
  end
  local found = {}
  local all = bufnr and vim.lsp.buf_get_clients(bufnr) or vim.lsp.get_active_clients()
  for _, client in pairs(all) do
    if client.name == NAME then
      table.insert(found, client)
    end
  end
  return found
end

local function is_dir(path)
  local stat = vim.loop.fs_stat(path)
  return stat ~= nil and stat.type == "directory"
end

--- The project root of a file: the nearest directory above it holding a root
--- marker, else the file's own directory (else the working directory).
function M.root_dir(path, markers)
  markers = markers or (M.config or defaults).root_markers
  if path == nil or path == "" then
    return vim.loop.cwd()
  end
  local dir = vim.fn.fnamemodify(path, ":p:h")
  if not is_dir(dir) then
    return vim.loop.cwd()
  end
  local current = dir
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(current .. "/" .. marker) then
        return current
      end
    end
    local parent = vim.fn.fnamemodify(current, ":h")
    if parent == current then
      return dir
    end
    current = parent
  end
end

-- An empty Lua table would go to the server as a JSON array.
local function settings()
  return next(M.config.settings) == nil and vim.empty_dict() or M.config.settings
end

local function client_config(root)
  local config = vim.tbl_extend("force", {
    name = NAME,
    cmd = M.config.cmd,
    init_options = settings(),
    settings = settings(),
  }, M.config.client)
  if root then
    config.root_dir = root
    config.workspace_folders = { { uri = vim.uri_from_fname(root), name = root } }
  end
  return config
end

-- Neovim 0.7: one client per root, started once and attached to each buffer.
local clients_by_root = {}

local function attach_07(bufnr, root)
  local id = clients_by_root[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    local config = client_config(root)
    local on_exit = config.on_exit
    config.on_exit = function(code, signal, client_id)
      if clients_by_root[root] == client_id then
        clients_by_root[root] = nil
      end
      if on_exit then
        on_exit(code, signal, client_id)
      end
    end
    id = vim.lsp.start_client(config)
    if id == nil then
      vim.notify("gpulens: could not start " .. table.concat(M.config.cmd, " "), vim.log.levels.ERROR)
      return nil
    end
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- Starts the server for `bufnr` (or attaches the running one of its root).
--- Used on Neovim 0.7–0.10; 0.11 attaches through vim.lsp.enable.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= "" then
    return nil -- help pages, terminals, scratch buffers
  end
  local root = M.root_dir(vim.api.nvim_buf_get_name(bufnr))
  if vim.lsp.start then
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  return attach_07(bufnr, root)
end

local function format_report(result)
  local profile = result and result.profile or vim.NIL
  local lines = { "# gpulens: the GPU the advice is for", "" }
  if profile == vim.NIL or profile == nil or profile.source == "none" or profile.name == nil then
    vim.list_extend(lines, {
      "No NVIDIA GPU found and no target GPU set: the advice is generic.",
      "Set `targetGpu` in the settings (or `target-gpu` under [tool.gpulens]) to the GPU the code will run on.",
    })
    return lines
  end
  local function add(label, value)
    if value ~= nil and value ~= vim.NIL and value ~= "" then
      table.insert(lines, string.format("- %s: %s", label, tostring(value)))
    end
  end
  add("GPU", profile.name)
  add("source", profile.source == "nvml" and "attached (NVML)" or "target (from the settings)")
  add("devices", profile.device_count)
  add("compute capability", profile.compute_capability)
  add("architecture", profile.architecture)
  if type(profile.memory_bytes) == "number" then
    add("memory", string.format("%.1f GB", profile.memory_bytes / 1e9))
  end
  if type(profile.memory_bandwidth_gbs) == "number" then
    add("memory bandwidth", string.format("%g GB/s", profile.memory_bandwidth_gbs))
  end
  if type(profile.fp64_divisor) == "number" then
    add("FP64 rate", string.format("1/%d of FP32", profile.fp64_divisor))
  end
  if type(profile.tensor_core_types) == "table" and #profile.tensor_core_types > 0 then
    add("tensor cores", table.concat(profile.tensor_core_types, ", "))
  end
  if type(profile.cuda_major) == "number" then
    add("CUDA (driver)", profile.cuda_major .. ".x")
  end
  if result.target ~= nil and result.target ~= vim.NIL then
    add("target setting", result.target)
  end
  return lines
end

M.format_report = format_report

--- Asks the server which GPU its advice is for; calls `callback(err, lines, result)`.
function M.gpu_report(bufnr, callback)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.clients(bufnr)[1] or M.clients()[1]
  if client == nil then
    callback("gpulens is not running (open a Python file first)", nil, nil)
    return
  end
  local params = { command = "gpulens.gpuProfile", arguments = {} }
  request(client, "workspace/executeCommand", params, function(err, result)
    if err then
      callback(err.message or tostring(err), nil, nil)
    else
      callback(nil, format_report(result), result)
    end
  end, bufnr)
end

--- :GpulensGpu — the GPU report in a floating window.
function M.show_gpu_report()
  M.gpu_report(0, function(err, lines)
    if err then
      vim.notify("gpulens: " .. err, vim.log.levels.WARN)
      return
    end
    vim.lsp.util.open_floating_preview(lines, "markdown", { border = "rounded", focus_id = "gpulens-gpu" })
  end)
end

function M.setup(opts)
  opts = opts or {}
  local config = vim.tbl_deep_extend("force", defaults, opts)
  -- Lists replace the defaults instead of merging with them index by index.
  for _, key in ipairs({ "cmd", "filetypes", "root_markers" }) do
    if opts[key] ~= nil then
      config[key] = opts[key]
    end
  end
  if type(config.cmd) == "string" then
    config.cmd = { config.cmd, "serve" }
  end
  M.config = config

  vim.api.nvim_create_user_command("GpulensGpu", M.show_gpu_report, {
    desc = "gpulens: show the GPU the advice is tuned to",
  })

  if vim.lsp.config ~= nil and vim.lsp.enable ~= nil then
    vim.lsp.config(NAME, {
      cmd = config.cmd,
      filetypes = config.filetypes,
      root_markers = config.root_markers,
      init_options = settings(),
      settings = settings(),
    })
    if next(config.client) ~= nil then
      vim.lsp.config(NAME, config.client)
    end
    vim.lsp.enable(NAME)
    return
  end

  local group = vim.api.nvim_create_augroup("gpulens", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  -- Buffers already open when setup() runs.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(config.filetypes, vim.bo[bufnr].filetype) then
      M.attach(bufnr)
    end
  end
end

return M
