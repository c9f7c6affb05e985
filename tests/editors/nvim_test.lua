-- Headless Neovim test of editors/nvim (run by tests/editors/run, on Neovim
-- 0.7 and 0.11): load the plugin with setup({cmd = …}), open a copy of an
-- example, wait for gpulens diagnostics, apply "Disable CODE for this line"
-- (and a rewrite quick fix when the server offers one), write the file.
-- tests/editors/run then checks the file on disk against the report this
-- script leaves.
--
-- Environment: GPULENS_BIN (the server), GPULENS_PLUGIN (editors/nvim),
-- GPULENS_TEST_FILE (the copy to edit), GPULENS_TEST_SECOND (a second Python
-- file in the same folder), GPULENS_TEST_REPORT (where to write the report),
-- GPULENS_TEST_WITHOUT_ENABLE=1 (on 0.11: test the vim.lsp.start path of 0.8–0.10).

local TIMEOUT = 20000

local function env(name)
  local value = os.getenv(name)
  assert(value and value ~= "", name .. " is not set")
  return value
end

local function say(message)
  io.stdout:write(message .. "\n")
  io.stdout:flush()
end

-- "0.11.4 (vim.lsp.enable)": the version, and how the plugin starts the server there.
local function version()
  local v = vim.version()
  local how = (vim.lsp.config and vim.lsp.enable) and "vim.lsp.enable"
    or vim.lsp.start and "vim.lsp.start"
    or "vim.lsp.start_client"
  return string.format("%d.%d.%d (%s)", v.major, v.minor, v.patch, how)
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local text = f:read("*a")
  f:close()
  return text
end

local function write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- On failure: what went wrong, Neovim's messages, and the end of the LSP log
-- (which holds the server's stderr).
local function report_failure(err)
  io.stderr:write(string.format("\nnvim %s: FAILED: %s\n", version(), tostring(err)))
  local ok, messages = pcall(vim.api.nvim_exec, "messages", true)
  if ok and messages ~= "" then
    io.stderr:write("--- :messages\n" .. messages .. "\n")
  end
  local log = vim.lsp.get_log_path()
  local text = read_file(log)
  if text then
    local lines = vim.split(text, "\n", { plain = true })
    io.stderr:write(string.format("--- last lines of %s\n", log))
    for i = math.max(1, #lines - 60), #lines do
      io.stderr:write(lines[i] .. "\n")
    end
  end
end

local function wait_for(what, predicate)
  if not vim.wait(TIMEOUT, predicate, 50) then
    error("timed out after " .. TIMEOUT .. " ms waiting for " .. what, 2)
  end
end

local function code_of(d)
  if d.code ~= nil then
    return d.code
  end
  return d.user_data and d.user_data.lsp and d.user_data.lsp.code
end

local function gpulens_diagnostics(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "gpulens" then
      table.insert(found, d)
    end
  end
  table.sort(found, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  return found
end

-- The diagnostic as the server sent it. 0.7 keeps only its code and data in
-- user_data.lsp; the line's diagnostics from vim.lsp.diagnostic have the range.
local function lsp_diagnostic(bufnr, client, d)
  local lsp = d.user_data and d.user_data.lsp
  if lsp and lsp.range then
    return lsp
  end
  for _, candidate in ipairs(vim.lsp.diagnostic.get_line_diagnostics(bufnr, d.lnum, {}, client.id)) do
    if candidate.code == code_of(d) then
      return candidate
    end
  end
  error("no LSP diagnostic for " .. tostring(code_of(d)) .. " on line " .. (d.lnum + 1))
end

local function code_actions(bufnr, diagnostic)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = diagnostic.range,
    context = { diagnostics = { diagnostic }, only = { "quickfix" } },
  }
  local responses, err = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, TIMEOUT)
  assert(responses, "textDocument/codeAction failed: " .. tostring(err))
  local actions = {}
  for _, response in pairs(responses) do
    assert(response.error == nil, "textDocument/codeAction error: " .. vim.inspect(response.error))
    for _, action in ipairs(response.result or {}) do
      table.insert(actions, action)
    end
  end
  return actions
end

local function text_edits(edit, uri)
  local edits = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    assert(change.textDocument and change.textDocument.uri == uri, "edit of another document: " .. vim.inspect(change))
    vim.list_extend(edits, change.edits)
  end
  for target, changes in pairs(edit.changes or {}) do
    assert(target == uri, "edit of another document: " .. target)
    vim.list_extend(edits, changes)
  end
  return edits
end

-- The buffer text an edit should give, worked out here independently of
-- Neovim's apply_workspace_edit.
local function apply_by_hand(lines, edits, encoding)
  local text = table.concat(lines, "\n") .. "\n"
  local starts, at = {}, 0
  for i, line in ipairs(lines) do
    starts[i] = at
    at = at + #line + 1
  end
  local function offset(position)
    local line = lines[position.line + 1]
    if line == nil then
      return #text
    end
    local column = position.character
    if line:find("[\128-\255]") and encoding ~= "utf-8" then
      if vim.fn.has("nvim-0.11") == 1 then
        column = vim.str_byteindex(line, encoding, column, false)
      else
        column = vim.str_byteindex(line, column, encoding == "utf-16")
      end
    end
    return starts[position.line + 1] + math.min(column, #line)
  end
  local sorted = vim.deepcopy(edits)
  table.sort(sorted, function(a, b)
    return offset(a.range.start) > offset(b.range.start)
  end)
  for _, edit in ipairs(sorted) do
    local s, e = offset(edit.range.start), offset(edit.range["end"])
    text = text:sub(1, s) .. edit.newText .. text:sub(e + 1)
  end
  return text
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, true), "\n") .. "\n"
end

local function main()
  local plugin = env("GPULENS_PLUGIN")
  local file = env("GPULENS_TEST_FILE")
  local second = env("GPULENS_TEST_SECOND")
  local report_path = env("GPULENS_TEST_REPORT")
  vim.opt.runtimepath:prepend(plugin)
  vim.lsp.set_log_level("info")
  vim.cmd("filetype on")

  if os.getenv("GPULENS_TEST_WITHOUT_ENABLE") == "1" then
    -- Take the path of Neovim 0.8–0.10 (vim.lsp.start from a FileType autocmd).
    vim.lsp.enable = nil
  end
  local gpulens = require("gpulens")
  gpulens.setup({ cmd = { env("GPULENS_BIN"), "serve" }, settings = { targetGpu = "H200" } })

  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.bo[bufnr].filetype == "python", "filetype is " .. vim.bo[bufnr].filetype)

  wait_for("gpulens to attach", function()
    return #gpulens.clients(bufnr) == 1
  end)
  local client = gpulens.clients(bufnr)[1]
  wait_for("gpulens diagnostics", function()
    return #gpulens_diagnostics(bufnr) > 0
  end)
  local diagnostics = gpulens_diagnostics(bufnr)
  say(string.format("nvim %s: %d gpulens diagnostics (%s positions)", version(), #diagnostics, client.offset_encoding))

  -- The settings went through: the advice is for the target GPU.
  local report
  gpulens.gpu_report(bufnr, function(err, lines, result)
    report = { err = err, lines = lines, result = result }
  end)
  wait_for("the GPU report", function()
    return report ~= nil
  end)
  assert(report.err == nil, "gpu report: " .. tostring(report.err))
  local profile = report.result.profile
  assert(profile.source == "target" and tostring(profile.name):find("H200"), "GPU profile: " .. vim.inspect(report.result))
  vim.cmd("GpulensGpu")
  say(string.format("nvim %s: GPU report: %s", version(), report.lines[3]))

  -- "Disable CODE for this line" on a one-line finding whose line has no comment.
  local target
  for _, d in ipairs(diagnostics) do
    local line = vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, true)[1]
    if (d.end_lnum == nil or d.end_lnum == d.lnum) and not line:find("#", 1, true) and code_of(d) then
      target = d
      break
    end
  end
  assert(target, "no one-line diagnostic on a line without a comment")
  local code = code_of(target)
  local lnum = target.lnum
  local before = vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, true)[1]
  local actions = code_actions(bufnr, lsp_diagnostic(bufnr, client, target))
  local title = "Disable " .. code .. " for this line"
  local disable
  for _, action in ipairs(actions) do
    if action.title == title then
      disable = action
    end
  end
  assert(disable and disable.edit, "no '" .. title .. "' action among " .. vim.inspect(actions))
  vim.lsp.util.apply_workspace_edit(disable.edit, client.offset_encoding)
  local after = vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, true)[1]
  local expected = before .. "  # gpulens: ignore[" .. code .. "]"
  assert(after == expected, string.format("line %d is\n  %q\nexpected\n  %q", lnum + 1, after, expected))
  say(string.format("nvim %s: applied %q on line %d", version(), title, lnum + 1))

  -- The server saw the edit: the finding is gone.
  wait_for(code .. " on line " .. (lnum + 1) .. " to go away", function()
    for _, d in ipairs(gpulens_diagnostics(bufnr)) do
      if d.lnum == lnum and code_of(d) == code then
        return false
      end
    end
    return true
  end)

  -- A rewrite quick fix, where the server offers one: the buffer must become
  -- exactly what its edit says.
  local rewrite
  for _, d in ipairs(gpulens_diagnostics(bufnr)) do
    for _, action in ipairs(code_actions(bufnr, lsp_diagnostic(bufnr, client, d))) do
      if action.edit and action.title:sub(1, 8) ~= "Disable " then
        rewrite = action
        break
      end
    end
    if rewrite then
      break
    end
  end
  local uri = vim.uri_from_bufnr(bufnr)
  if rewrite then
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
    local want = apply_by_hand(lines, text_edits(rewrite.edit, uri), client.offset_encoding)
    vim.lsp.util.apply_workspace_edit(rewrite.edit, client.offset_encoding)
    local got = buffer_text(bufnr)
    assert(got == want, "after " .. rewrite.title .. ":\n" .. got .. "\nexpected:\n" .. want)
    say(string.format("nvim %s: applied the quick fix %q", version(), rewrite.title))
  else
    say(string.format("nvim %s: the server offered no rewrite quick fix", version()))
  end

  vim.cmd("silent write")
  write_file(report_path, vim.json.encode({
    line = lnum + 1,
    code = code,
    before = before,
    rewrite = rewrite and rewrite.title or vim.NIL,
    text = buffer_text(bufnr),
  }))

  -- A second file of the same project shares the running server.
  vim.cmd("edit " .. vim.fn.fnameescape(second))
  local other = vim.api.nvim_get_current_buf()
  wait_for("gpulens to attach to a second file", function()
    return #gpulens.clients(other) == 1
  end)
  assert(#gpulens.clients() == 1, "expected one gpulens client for one project, found " .. #gpulens.clients())
  assert(gpulens.clients(other)[1].id == client.id, "the second file got its own client")
  say(string.format("nvim %s: a second file reuses the same client", version()))
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  report_failure(err)
  vim.cmd("cquit 3")
end
vim.cmd("qall!")
