-- Headless Neovim, no plugin, no configuration: sqlive attached with the
-- built-in LSP client, as Debian 12's Neovim 0.7.2 has it (vim.lsp.start_client
-- and buf_attach_client); later Neovims take vim.lsp.start.
--
-- What a user sees: the diagnostic on a missing table, cleared when another
-- process (the sqlite3 shell) creates the table; an edit that makes and fixes
-- an error; columns counted alike by Neovim and the server on a line with
-- multi-byte characters; completion through an alias; a code lens run.
--
-- Run: SQLIVE_BIN=/path/to/sqlive SQLIVE_DIR=<an empty directory> \
--        nvim --headless --clean -c "luafile diagnostics.lua"
-- Exits 0 when every check passes; otherwise 1, with "FAIL: ..." on stderr.

local timeout = 20000 -- ms; only a hang reaches it

local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local say, fail = harness.say, harness.fail

local function main()
  local bin = os.getenv("SQLIVE_BIN")
  local dir = os.getenv("SQLIVE_DIR")
  if not bin or bin == "" or not dir or dir == "" then
    fail("set SQLIVE_BIN (the sqlive binary) and SQLIVE_DIR (an empty directory)")
  end
  say("Neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. "." .. tostring(vim.version().patch))

  local database = dir .. "/games.sqlite"
  local function sqlite3(sql)
    local output = vim.fn.system({ "sqlite3", database, sql })
    if vim.v.shell_error ~= 0 then
      fail("sqlite3 failed on " .. sql .. ": " .. output)
    end
  end
  sqlite3("CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO players(name) VALUES ('Ann');")

  local path = dir .. "/queries.sql"
  local file = assert(io.open(path, "w"))
  file:write("SELECT * FROM missing;\n")
  file:close()
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local buffer = vim.api.nvim_get_current_buf()

  local config = { name = "sqlive", cmd = { bin, "--lsp", database }, root_dir = dir }
  local client_id
  if vim.fn.has("nvim-0.8") == 1 and vim.lsp.start then
    client_id = vim.lsp.start(config, { bufnr = buffer })
  else
    client_id = vim.lsp.start_client(config)
    if client_id then
      vim.lsp.buf_attach_client(buffer, client_id)
    end
  end
  if not client_id then
    fail("the LSP client did not start " .. bin)
  end

  local function diagnostics()
    return vim.diagnostic.get(buffer)
  end

  local function wait_for(description, predicate)
    if not vim.wait(timeout, predicate, 20) then
      local client = vim.lsp.get_client_by_id(client_id)
      fail(
        description
          .. " (waited "
          .. timeout / 1000
          .. " s); diagnostics: "
          .. vim.inspect(diagnostics())
          .. (client and "" or "; the client is not running")
      )
    end
  end

  local function request(method, params)
    local responses, err = vim.lsp.buf_request_sync(buffer, method, params, timeout)
    if not responses then
      fail(method .. " got no answer: " .. tostring(err))
    end
    local response = responses[client_id]
    if not response then
      fail(method .. " got no answer from sqlive: " .. vim.inspect(responses))
    end
    if response.err or response.error then
      fail(method .. " failed: " .. vim.inspect(response.err or response.error))
    end
    return response.result
  end

  local function expect_one_error(name, line_text)
    wait_for("no diagnostic on `" .. name .. "`", function()
      return #diagnostics() > 0
    end)
    local all = diagnostics()
    local first = all[1]
    -- Neovim turns the server's columns (in the encoding they agreed on)
    -- into byte columns of the buffer's line.
    local col = line_text:find(name, 1, true) - 1
    if
      #all ~= 1
      or first.message ~= "no such table: " .. name
      or first.severity ~= vim.diagnostic.severity.ERROR
      or first.lnum ~= 0
      or first.col ~= col
      or first.end_lnum ~= 0
      or first.end_col ~= col + #name
    then
      fail(
        "expected one error on `"
          .. name
          .. "` at bytes "
          .. col
          .. "-"
          .. col + #name
          .. " of "
          .. line_text
          .. "; got "
          .. vim.inspect(all)
      )
    end
  end

  local function expect_none(description)
    wait_for(description, function()
      return #diagnostics() == 0
    end)
  end

  -- 1. The missing table is flagged, on its name.
  expect_one_error("missing", "SELECT * FROM missing;")
  say("ok: the missing table is flagged on its name")

  -- 2. Another process creating it clears the error, with no edit in Neovim.
  sqlite3("CREATE TABLE missing(x);")
  expect_none("the diagnostic stayed after the sqlite3 shell created the table")
  say("ok: the sqlite3 shell creating the table clears it")

  -- 3. Edits, sent as incremental changes, make and fix an error.
  vim.api.nvim_buf_set_text(buffer, 0, 14, 0, 21, { "nope" })
  expect_one_error("nope", "SELECT * FROM nope;")
  vim.api.nvim_buf_set_text(buffer, 0, 14, 0, 18, { "players" })
  expect_none("the edit back to an existing table did not clear the diagnostic")
  say("ok: edits make and fix an error")

  -- 4. Multi-byte characters before the error: Neovim and the server count
  -- columns in the same encoding, so the error sits on the word.
  local multibyte = "SELECT 'héllo😀' AS x FROM nope;"
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, { multibyte })
  expect_one_error("nope", multibyte)
  vim.api.nvim_buf_set_text(buffer, 0, #multibyte - 5, 0, #multibyte - 1, { "players" })
  expect_none("the edit after multi-byte characters did not clear the diagnostic")
  say("ok: columns agree after multi-byte characters")

  -- 5. Completion through an alias, as <C-x><C-o> asks it.
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, { "SELECT p. FROM players AS p;" })
  local completion = request("textDocument/completion", {
    textDocument = { uri = vim.uri_from_bufnr(buffer) },
    position = { line = 0, character = 9 },
  })
  local labels = {}
  for _, item in ipairs((completion and (completion.items or completion)) or {}) do
    table.insert(labels, item.label)
  end
  table.sort(labels)
  if table.concat(labels, ",") ~= "id,name" then
    fail("completion after `p.` gave " .. vim.inspect(labels) .. ", not id and name")
  end
  say("ok: completion through an alias")

  -- 6. The Run lens of a statement, executed as `vim.lsp.codelens.run()` would.
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, { "SELECT 1;", "SELECT name FROM players;" })
  local lenses = request("textDocument/codeLens", { textDocument = { uri = vim.uri_from_bufnr(buffer) } })
  local run
  for _, lens in ipairs(lenses or {}) do
    if lens.command and lens.command.command == "sqlive.run" and lens.range.start.line == 1 then
      run = lens.command
    end
  end
  if not run then
    fail("no Run lens on line 2: " .. vim.inspect(lenses))
  end
  local result = request("workspace/executeCommand", { command = run.command, arguments = run.arguments })
  local rows = result and result.results and result.results[1] and result.results[1].rows
  if not rows or #rows ~= 1 or rows[1][1] ~= "Ann" then
    fail("the Run lens gave " .. vim.inspect(result))
  end
  say("ok: a Run lens runs its statement")

  vim.lsp.stop_client(client_id)
  vim.wait(timeout, function()
    return vim.lsp.get_client_by_id(client_id) == nil
  end, 20)
end

harness.run(main)
