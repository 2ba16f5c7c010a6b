-- sqlive for Neovim: the language server (diagnostics, completion, hover,
-- lenses) through Neovim's own LSP client, and sqlive's results and live
-- queries in buffers. Rendering and commands only: every database question
-- goes to `sqlive --lsp`.
--
-- Works on Neovim 0.7.2 (Debian 12) and later.

local render = require("sqlive.render")

local M = {}

local defaults = {
  -- The command that starts sqlive; `--lsp` is added. Default:
  -- vim.g.sqlive_command, else { "sqlive" }.
  cmd = nil,
  -- A database to open when sqlive starts.
  database = nil,
  -- Start sqlive for every SQL buffer, not only for those that name a
  -- database (`-- sqlive: database=PATH` on their first line) or once
  -- :SqliveOpen has run.
  autostart = false,
  filetypes = { "sql" },
  -- Where result buffers open: a command run before showing one.
  split = "rightbelow vsplit",
  -- Each read-only statement's live result at the end of its line: as
  -- inlay hints on Neovim 0.10 and later, as virtual text before.
  inline = true,
}

-- The plugin's state, owned by this module (Neovim runs Lua on one thread).
local state = {
  config = vim.deepcopy(defaults),
  client_id = nil,
  ready = false,
  -- Work waiting for `initialize` to be answered.
  pending = {},
  -- name -> { buffer, snapshot, fields }
  watches = {},
  trace_buffer = nil,
  stopping = false,
}

local function notify(message, level)
  vim.notify("sqlive: " .. message, level or vim.log.levels.INFO)
end

local function fail(message)
  error({ sqlive = message }, 0)
end

-- Runs `fn`, turning any failure into a Neovim message: a user never sees a
-- Lua stack trace, and a plugin bug still says where it happened.
local function guarded(fn)
  return function(...)
    local ok, problem = xpcall(fn, function(e)
      if type(e) == "table" and e.sqlive then
        return e.sqlive
      end
      return "internal error: " .. tostring(e)
    end, ...)
    if not ok then
      notify(problem, vim.log.levels.ERROR)
    end
  end
end

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

-- Client methods: `client:request(...)` from Neovim 0.11, `client.request`
-- before.
local function call(client, method, ...)
  if has("0.11") then
    return client[method](client, ...)
  end
  return client[method](...)
end

local function client()
  return state.client_id and vim.lsp.get_client_by_id(state.client_id) or nil
end

local function command()
  local cmd = state.config.cmd or vim.g.sqlive_command or { "sqlive" }
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  if type(cmd) ~= "table" or #cmd == 0 then
    fail("vim.g.sqlive_command (or setup{ cmd = … }) must be a list such as { \"sqlive\" }")
  end
  cmd = vim.deepcopy(cmd)
  table.insert(cmd, "--lsp")
  return cmd
end

local function is_sql(buffer)
  return vim.tbl_contains(state.config.filetypes, vim.bo[buffer].filetype)
end

local handlers = {}
-- Defined below: starts sqlive once, then runs work with its client.
local with_client

-- Inline results ------------------------------------------------------------

-- Neovim 0.10 and later draw inlay hints, and refresh them when the server
-- asks; before, the plugin asks for them and draws them as virtual text.
local builtin_inlay_hints = has("0.10") and vim.lsp.inlay_hint ~= nil
local inline_namespace = vim.api.nvim_create_namespace("sqlive_inline")
-- Buffers whose inline results the plugin draws itself.
local inline_buffers = {}

local function hint_label(hint)
  if type(hint.label) == "string" then
    return hint.label
  end
  local parts = {}
  for _, part in ipairs(hint.label or {}) do
    table.insert(parts, part.value or "")
  end
  return table.concat(parts)
end

local function draw_inline(buffer, hints)
  vim.api.nvim_buf_clear_namespace(buffer, inline_namespace, 0, -1)
  local count = vim.api.nvim_buf_line_count(buffer)
  for _, hint in ipairs(hints or {}) do
    local line = hint.position.line
    if line < count then
      vim.api.nvim_buf_set_extmark(buffer, inline_namespace, line, 0, {
        virt_text = { { " " .. hint_label(hint), "Comment" } },
        virt_text_pos = "eol",
      })
    end
  end
end

local function refresh_inline(buffer, attempt)
  if not inline_buffers[buffer] or not vim.api.nvim_buf_is_loaded(buffer) then
    return
  end
  attempt = attempt or 1
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buffer) },
    range = {
      start = { line = 0, character = 0 },
      ["end"] = { line = vim.api.nvim_buf_line_count(buffer), character = 0 },
    },
  }
  with_client(function(lsp_client)
    call(lsp_client, "request", "textDocument/inlayHint", params, function(err, result)
      if err then
        -- Asked before Neovim sent the document (it does once the server
        -- is ready): ask again, a few times.
        if attempt < 10 then
          vim.defer_fn(function()
            refresh_inline(buffer, attempt + 1)
          end, 200)
        end
      elseif vim.api.nvim_buf_is_valid(buffer) then
        guarded(draw_inline)(buffer, result)
      end
    end, buffer)
  end)
end

-- Starts showing a buffer's inline results.
local function inline_attach(buffer)
  if not state.config.inline then
    return
  end
  if builtin_inlay_hints then
    vim.lsp.inlay_hint.enable(true, { bufnr = buffer })
    return
  end
  if inline_buffers[buffer] then
    return
  end
  inline_buffers[buffer] = true
  -- After Neovim has sent the change (it waits 150 ms to gather edits).
  vim.api.nvim_create_autocmd({ "TextChanged", "InsertLeave" }, {
    buffer = buffer,
    callback = function()
      vim.defer_fn(function()
        refresh_inline(buffer)
      end, 300)
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buffer,
    callback = function()
      inline_buffers[buffer] = nil
    end,
  })
  refresh_inline(buffer)
end

if not builtin_inlay_hints then
  -- An inline result changed (another process wrote): draw them again.
  handlers["workspace/inlayHint/refresh"] = function()
    for buffer in pairs(inline_buffers) do
      refresh_inline(buffer)
    end
    return vim.NIL
  end
end

local function attach(buffer)
  if state.client_id and vim.api.nvim_buf_is_loaded(buffer) and is_sql(buffer) then
    if not vim.lsp.buf_is_attached(buffer, state.client_id) then
      vim.lsp.buf_attach_client(buffer, state.client_id)
      inline_attach(buffer)
    end
  end
end

-- Starts sqlive once; `then_do(client)` runs when it has answered
-- `initialize`.
function with_client(then_do)
  if state.client_id and not client() then
    state.client_id, state.ready = nil, false
  end
  if state.ready then
    then_do(client())
    return
  end
  table.insert(state.pending, then_do)
  if state.client_id then
    return
  end
  local cmd = command()
  if vim.fn.executable(cmd[1]) ~= 1 then
    state.pending = {}
    fail(cmd[1] .. " is not an executable; set vim.g.sqlive_command or setup{ cmd = { \"/path/to/sqlive\" } }")
  end
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  if not builtin_inlay_hints then
    -- The plugin asks for inlay hints itself, and redraws them when asked.
    capabilities.textDocument.inlayHint = { dynamicRegistration = false }
    capabilities.workspace = capabilities.workspace or {}
    capabilities.workspace.inlayHint = { refreshSupport = true }
  end
  local config = {
    name = "sqlive",
    cmd = cmd,
    capabilities = capabilities,
    root_dir = (vim.uv or vim.loop).cwd(),
    handlers = handlers,
    init_options = state.config.database and { database = state.config.database } or nil,
    on_init = function(lsp_client)
      state.ready = true
      local waiting = state.pending
      state.pending = {}
      for _, fn in ipairs(waiting) do
        guarded(fn)(lsp_client)
      end
    end,
    on_exit = function(code, signal)
      local expected = state.stopping
      state.client_id, state.ready, state.pending, state.stopping = nil, false, {}, false
      if not expected then
        vim.schedule(function()
          notify(string.format("the server exited (code %s, signal %s)", tostring(code), tostring(signal)),
            vim.log.levels.WARN)
        end)
      end
    end,
  }
  local ok, id
  if has("0.11") then
    ok, id = pcall(vim.lsp.start, config, { attach = false })
  else
    ok, id = pcall(vim.lsp.start_client, config)
  end
  if not ok or not id then
    state.pending = {}
    fail("cannot start " .. table.concat(cmd, " ") .. (ok and "" or (": " .. tostring(id))))
  end
  state.client_id = id
  for _, buffer in ipairs(vim.api.nvim_list_bufs()) do
    attach(buffer)
  end
end

-- Sends a request; `on_result(result)` runs with its answer. An error
-- answer becomes a message (SQLite's own text for SQL errors).
local function request(method, params, on_result)
  with_client(function(lsp_client)
    call(lsp_client, "request", method, params, function(err, result)
      if err then
        notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
        return
      end
      guarded(on_result)(result)
    end)
  end)
end

local function execute_command(name, argument, on_result)
  request("workspace/executeCommand", { command = name, arguments = { argument } }, on_result)
end

-- Buffers ----------------------------------------------------------------

-- A scratch buffer named `name`, created once and reused.
local function scratch(name)
  local buffer = vim.fn.bufnr("^" .. vim.fn.escape(name, "\\/.*$^~[]") .. "$")
  if buffer == -1 or not vim.api.nvim_buf_is_valid(buffer) then
    buffer = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buffer, name)
    vim.bo[buffer].buftype = "nofile"
    vim.bo[buffer].bufhidden = "hide"
    vim.bo[buffer].swapfile = false
    vim.bo[buffer].filetype = "sqlive"
  end
  return buffer
end

-- Shows `buffer` in a window beside the current one, unless one shows it.
local function show(buffer)
  if vim.fn.bufwinid(buffer) ~= -1 then
    return
  end
  local from = vim.api.nvim_get_current_win()
  vim.cmd(state.config.split)
  vim.api.nvim_win_set_buf(0, buffer)
  vim.wo.wrap = false
  vim.api.nvim_set_current_win(from)
end

-- Replaces the lines of `buffer`, keeping each window's cursor and scroll.
local function set_lines(buffer, lines)
  local views = {}
  for _, window in ipairs(vim.fn.win_findbuf(buffer)) do
    views[window] = vim.api.nvim_win_call(window, vim.fn.winsaveview)
  end
  vim.bo[buffer].modifiable = true
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, lines)
  vim.bo[buffer].modifiable = false
  vim.bo[buffer].modified = false
  for window, view in pairs(views) do
    vim.api.nvim_win_call(window, function()
      vim.fn.winrestview(view)
    end)
  end
end

-- What a command acts on ---------------------------------------------------

-- The text of a range given to a command: the visual selection (character-
-- wise when it was one) or whole lines.
local function range_text(buffer, opts)
  local start, finish = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if vim.fn.visualmode() == "v" and start[2] == opts.line1 and finish[2] == opts.line2 then
    local last = vim.api.nvim_buf_get_lines(buffer, finish[2] - 1, finish[2], false)[1] or ""
    local finish_col = math.min(finish[3], #last)
    local ok, text = pcall(vim.api.nvim_buf_get_text, buffer, start[2] - 1, start[3] - 1, finish[2] - 1, finish_col, {})
    if ok then
      return table.concat(text, "\n")
    end
  end
  return table.concat(vim.api.nvim_buf_get_lines(buffer, opts.line1 - 1, opts.line2, false), "\n")
end

-- The paragraph around the cursor (lines between blank lines).
local function paragraph_text(buffer)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local lines = vim.api.nvim_buf_get_lines(buffer, 0, -1, false)
  local first, last = row, row
  while first > 1 and vim.trim(lines[first - 1]) ~= "" do
    first = first - 1
  end
  while last < #lines and vim.trim(lines[last + 1]) ~= "" do
    last = last + 1
  end
  return table.concat(vim.list_slice(lines, first, last), "\n")
end

-- The argument of sqlive's commands for the statement a user means: the
-- range's text, the statement under the cursor in a buffer sqlive knows
-- (sqlive finds it, as it parses it), else the paragraph.
local function target(opts, lsp_client)
  local buffer = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(buffer)
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  if opts.range and opts.range > 0 then
    return { uri = uri, line = opts.line1 - 1, sql = range_text(buffer, opts) }
  end
  if lsp_client and vim.lsp.buf_is_attached(buffer, lsp_client.id) then
    local params = vim.lsp.util.make_position_params(0, lsp_client.offset_encoding or "utf-16")
    return { uri = uri, position = params.position }
  end
  local sql = paragraph_text(buffer)
  if vim.trim(sql) == "" then
    fail("no statement under the cursor")
  end
  return { uri = uri, line = line, sql = sql }
end

-- Watches -------------------------------------------------------------------

local function render_watch(name)
  local watch = state.watches[name]
  if not watch then
    return
  end
  if not vim.api.nvim_buf_is_valid(watch.buffer) then
    watch.buffer = scratch("sqlive://" .. name)
  end
  set_lines(watch.buffer, render.watch(name, watch.snapshot, watch.fields))
end

local function watch_buffer(name)
  local buffer = scratch("sqlive://" .. name)
  vim.api.nvim_buf_set_var(buffer, "sqlive_watch", name)
  -- Wiping the buffer ends the live query.
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buffer,
    once = true,
    callback = function()
      if state.watches[name] and state.watches[name].buffer == buffer then
        state.watches[name] = nil
        if state.ready then
          call(client(), "request", "liveQuery/unregister", { name = name }, function() end)
        end
      end
    end,
  })
  return buffer
end

-- A live query's first result (from register, update or sqlive.watch).
local function watched(snapshot)
  local name = snapshot.name
  local watch = state.watches[name]
  if not watch then
    watch = { buffer = watch_buffer(name) }
    state.watches[name] = watch
  end
  -- A change may have overtaken this answer: keep the newest version.
  if not (watch.fields and (watch.fields.version or 0) > snapshot.version) then
    watch.snapshot = { columns = snapshot.columns, rows = snapshot.rows }
    watch.fields = { version = snapshot.version, cause = "registered", tables = snapshot.tables }
    render_watch(name)
  end
  show(watch.buffer)
end

handlers["liveQuery/changed"] = function(_, params)
  guarded(function()
    local name = params.name
    local watch = state.watches[name]
    if not watch then
      -- Registered elsewhere (a Watch code lens): give it a buffer too.
      watch = { buffer = watch_buffer(name) }
      state.watches[name] = watch
      show(watch.buffer)
    end
    if watch.fields and (watch.fields.version or 0) >= params.version then
      return
    end
    watch.snapshot = { columns = params.columns, rows = params.rows }
    watch.fields = {
      version = params.version,
      cause = params.cause,
      tables = params.tables,
      elapsedMs = params.elapsedMs,
    }
    render_watch(name)
  end)()
end

handlers["liveQuery/error"] = function(_, params)
  guarded(function()
    local message = params.error and params.error.message or "unknown error"
    notify(params.name .. ": " .. message, vim.log.levels.WARN)
    local watch = state.watches[params.name]
    if watch and watch.snapshot then
      watch.fields.error = message
      watch.fields.time = os.date("%H:%M:%S")
      render_watch(params.name)
      watch.fields.error, watch.fields.time = nil, nil
    end
  end)()
end

handlers["trace/statement"] = function(_, params)
  guarded(function()
    local buffer = state.trace_buffer
    if not buffer or not vim.api.nvim_buf_is_valid(buffer) then
      return
    end
    -- Follow the end, as `tail -f` does, in windows whose cursor is there.
    local count = vim.api.nvim_buf_line_count(buffer)
    local following = {}
    for _, window in ipairs(vim.fn.win_findbuf(buffer)) do
      if vim.api.nvim_win_get_cursor(window)[1] == count then
        table.insert(following, window)
      end
    end
    local empty = count == 1 and vim.api.nvim_buf_get_lines(buffer, 0, 1, false)[1] == ""
    vim.bo[buffer].modifiable = true
    vim.api.nvim_buf_set_lines(buffer, empty and 0 or -1, -1, false, { render.trace(params) })
    count = empty and 0 or count
    vim.bo[buffer].modifiable = false
    for _, window in ipairs(following) do
      vim.api.nvim_win_set_cursor(window, { count + 1, 0 })
    end
  end)()
end

-- Commands --------------------------------------------------------------------

--- :SqliveOpen {path}
function M.open(path)
  if not path or vim.trim(path) == "" then
    fail("give a database file: :SqliveOpen {path}")
  end
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  request("database/open", { path = full }, function(result)
    notify(string.format("opened %s (SQLite %s, %s journal)", result.path, result.sqliteVersion, result.journalMode))
  end)
end

-- Runs one of sqlive's commands on the statement the user means, and
-- shows `draw(sql, result)` in the buffer `name`.
local function show_command(command_name, opts, name, draw)
  with_client(function(lsp_client)
    local argument = target(opts or {}, lsp_client)
    execute_command(command_name, argument, function(result)
      local buffer = scratch(name)
      set_lines(buffer, draw(result.sql or argument.sql, result))
      show(buffer)
    end)
  end)
end

--- :[range]SqliveQuery
function M.query(opts)
  show_command("sqlive.run", opts, "sqlive://result", render.results)
end

--- :SqliveWatch [name [sql]]
function M.watch(opts)
  local args = opts and opts.fargs or {}
  local name = args[1]
  if name and #args > 1 then
    local sql = table.concat(vim.list_slice(args, 2), " ")
    local params = { name = name, sql = sql }
    local method = state.watches[name] and "liveQuery/update" or "liveQuery/register"
    request(method, params, watched)
    return
  end
  with_client(function(lsp_client)
    local argument = target(opts or {}, lsp_client)
    argument.name = name
    execute_command("sqlive.watch", argument, watched)
  end)
end

--- :SqliveUnwatch {name}
function M.unwatch(name)
  if not name or name == "" then
    fail("give a live query's name: :SqliveUnwatch {name}")
  end
  request("liveQuery/unregister", { name = name }, function()
    local watch = state.watches[name]
    state.watches[name] = nil
    if watch and vim.api.nvim_buf_is_valid(watch.buffer) then
      local lines = vim.api.nvim_buf_get_lines(watch.buffer, 0, -1, false)
      lines[1] = (lines[1] or "") .. " · unwatched"
      set_lines(watch.buffer, lines)
    end
    notify("stopped watching " .. name)
  end)
end

--- :[range]SqliveExplain
function M.explain(opts)
  show_command("sqlive.explain", opts, "sqlive://plan", render.plan)
end

--- :SqliveTrace on|profile|off
function M.trace(mode)
  local settings = {
    on = { enabled = true, profile = false },
    profile = { enabled = true, profile = true },
    off = { enabled = false },
  }
  local params = settings[mode or ""]
  if not params then
    fail("use :SqliveTrace on, :SqliveTrace profile or :SqliveTrace off")
  end
  request("trace/set", params, function()
    if params.enabled then
      state.trace_buffer = scratch("sqlive://trace")
      show(state.trace_buffer)
    end
    notify("trace " .. mode)
  end)
end

--- The live queries this Neovim shows, for completion.
function M.watch_names()
  local names = vim.tbl_keys(state.watches)
  table.sort(names)
  return names
end

--- Stops sqlive (watch buffers stay, no longer updated).
function M.stop()
  local lsp_client = client()
  if lsp_client then
    state.stopping = true
    call(lsp_client, "stop")
  end
end

--- Configure the plugin; every key is optional (see `defaults` above).
function M.setup(options)
  state.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), options or {})
  if state.config.database then
    state.config.database = vim.fn.fnamemodify(vim.fn.expand(state.config.database), ":p")
  end
end

-- A SQL buffer gets the language server when sqlive runs, or when it names
-- its database on its first line, or with setup{ autostart = true }.
function M.buffer_opened(buffer)
  if not is_sql(buffer) then
    return
  end
  if state.client_id then
    attach(buffer)
    return
  end
  local first = vim.api.nvim_buf_get_lines(buffer, 0, 1, false)[1] or ""
  if state.config.autostart or state.config.database or first:match("^%s*%-%-%s*sqlive:%s*database=") then
    with_client(function() end)
  end
end

-- Exposed for the commands in plugin/sqlive.lua.
M.guarded = guarded

return M
