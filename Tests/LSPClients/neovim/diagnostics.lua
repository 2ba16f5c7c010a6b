-- Headless Neovim, no plugin: sqlive attached with the built-in LSP client
-- (vim.lsp.start_client and buf_attach_client, as Neovim 0.7 has them).
-- It checks what a user sees: the diagnostic on a missing table, the edit
-- that fixes it, and another process creating the table clearing it.
--
-- Run: SQLIVE_BIN=... SQLIVE_DIR=<empty directory> nvim --headless --clean -c "luafile diagnostics.lua"
-- Exits 0 when every check passes, 1 with a message on stderr otherwise.

local bin = os.getenv("SQLIVE_BIN")
local dir = os.getenv("SQLIVE_DIR")
local timeout = 20000

local function fail(message)
  io.stderr:write("FAIL: " .. message .. "\n")
  vim.cmd("cquit 1")
end

local function step(message)
  io.stderr:write("ok: " .. message .. "\n")
end

if not bin or not dir then
  fail("set SQLIVE_BIN and SQLIVE_DIR")
end

local database = dir .. "/games.sqlite"
vim.fn.system({ "sqlite3", database, "CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT NOT NULL);" })
if vim.v.shell_error ~= 0 then
  fail("sqlite3 could not create the database")
end

local path = dir .. "/queries.sql"
local file = io.open(path, "w")
file:write("SELECT * FROM missing;\n")
file:close()
vim.cmd("edit " .. path)
local buffer = vim.api.nvim_get_current_buf()

local client_id = vim.lsp.start_client({
  name = "sqlive",
  cmd = { bin, "--lsp", database },
  root_dir = dir,
})
if not client_id then
  fail("the client did not start")
end
vim.lsp.buf_attach_client(buffer, client_id)

local function diagnostics()
  return vim.diagnostic.get(buffer)
end

local function wait_for(description, predicate)
  if not vim.wait(timeout, predicate, 20) then
    fail(description .. "; diagnostics: " .. vim.inspect(diagnostics()))
  end
end

-- 1. The missing table is flagged, on its name.
wait_for("no diagnostic for the missing table", function()
  return #diagnostics() == 1
end)
local first = diagnostics()[1]
if first.message ~= "no such table: missing" or first.lnum ~= 0 or first.col ~= 14 or first.end_col ~= 21 then
  fail("unexpected diagnostic: " .. vim.inspect(first))
end
if first.severity ~= vim.diagnostic.severity.ERROR then
  fail("the diagnostic is not an error: " .. vim.inspect(first))
end
step("the missing table is flagged on its name")

-- 2. An edit in the buffer (sent as an incremental change) fixes it.
vim.api.nvim_buf_set_text(buffer, 0, 14, 0, 21, { "players" })
wait_for("the edit did not clear the diagnostic", function()
  return #diagnostics() == 0
end)
step("an edit clears it")

-- 3. Completion through an alias, as the user's <C-x><C-o> would ask it.
vim.api.nvim_buf_set_lines(buffer, 0, -1, false, { "SELECT p. FROM players AS p;" })
local responses = vim.lsp.buf_request_sync(buffer, "textDocument/completion", {
  textDocument = { uri = vim.uri_from_bufnr(buffer) },
  position = { line = 0, character = 9 },
}, timeout)
local labels = {}
for _, response in pairs(responses or {}) do
  local items = response.result and (response.result.items or response.result) or {}
  for _, item in ipairs(items) do
    table.insert(labels, item.label)
  end
end
if table.concat(labels, ",") ~= "id,name" then
  fail("completion of p. gave " .. vim.inspect(labels))
end
step("completion through an alias")

-- 4. Another process creating the missing table clears the error by itself.
vim.api.nvim_buf_set_lines(buffer, 0, -1, false, { "SELECT * FROM missing;" })
wait_for("no diagnostic after the edit back", function()
  return #diagnostics() == 1
end)
vim.fn.system({ "sqlite3", database, "CREATE TABLE missing(x);" })
if vim.v.shell_error ~= 0 then
  fail("sqlite3 could not create the table")
end
wait_for("creating the table in another process did not clear the diagnostic", function()
  return #diagnostics() == 0
end)
step("another process creating the table clears it")

vim.lsp.stop_client(client_id)
vim.wait(timeout, function()
  return vim.lsp.get_client_by_id(client_id) == nil
end, 20)
vim.cmd("qall!")
