-- Headless Neovim with the sample plugin (Samples/editors/neovim) and
-- nothing else: what a user of the plugin sees, checked in its buffers.
--
-- :SqliveOpen, :SqliveQuery (statement under the cursor, and a selection),
-- :SqliveWatch with another process (the sqlite3 shell) writing — the watch
-- buffer shows the new row and keeps its cursor —, :SqliveExplain with its
-- hint, :SqliveTrace, :SqliveUnwatch, errors as messages (never a Lua stack
-- trace), diagnostics from the language server the plugin starts.
--
-- Run: SQLIVE_BIN=/path/to/sqlive SQLIVE_DIR=<an empty directory> \
--        nvim --headless --clean --cmd "set rtp^=Samples/editors/neovim" -c "luafile plugin.lua"
-- Exits 0 when every check passes; otherwise 1, with "FAIL: ..." on stderr.

local timeout = 20000 -- ms; only a hang reaches it

local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local say, fail = harness.say, harness.fail

-- Every message the plugin shows, as the user would see it.
local messages = {}
vim.notify = function(message, level)
  table.insert(messages, { text = tostring(message), level = level or vim.log.levels.INFO })
end

local function messages_text()
  local lines = {}
  for _, message in ipairs(messages) do
    table.insert(lines, string.format("[%d] %s", message.level, message.text))
  end
  return table.concat(lines, "\n")
end

local function wait_for(description, predicate, details)
  if not vim.wait(timeout, predicate, 20) then
    fail(description .. " (waited " .. timeout / 1000 .. " s)" .. (details and ("\n" .. details()) or "")
      .. "\nmessages:\n" .. messages_text())
  end
end

local function wait_for_message(pattern, level)
  local found
  wait_for("no message matching " .. pattern, function()
    for _, message in ipairs(messages) do
      if message.text:find(pattern) and (level == nil or message.level == level) then
        found = message
        return true
      end
    end
    return false
  end)
  return found
end

local function buffer_named(name)
  local buffer = vim.fn.bufnr("^" .. vim.fn.escape(name, "\\/.*$^~[]") .. "$")
  return buffer ~= -1 and buffer or nil
end

local function lines_of(name)
  local buffer = buffer_named(name)
  return buffer and vim.api.nvim_buf_get_lines(buffer, 0, -1, false) or {}
end

local function expect_lines(name, expected, from)
  local got
  wait_for(name .. " never showed the expected lines", function()
    from = from or 1
    got = vim.list_slice(lines_of(name), from, from + #expected - 1)
    return vim.deep_equal(got, expected)
  end, function()
    return "expected:\n" .. table.concat(expected, "\n") .. "\ngot:\n" .. table.concat(lines_of(name), "\n")
  end)
end

local function main()
  local bin = os.getenv("SQLIVE_BIN")
  local dir = os.getenv("SQLIVE_DIR")
  if not bin or bin == "" or not dir or dir == "" then
    fail("set SQLIVE_BIN (the sqlive binary) and SQLIVE_DIR (an empty directory)")
  end
  say("Neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. "." .. tostring(vim.version().patch))
  if vim.fn.exists(":SqliveOpen") ~= 2 then
    fail("the plugin's commands are not defined: is Samples/editors/neovim on 'runtimepath'?")
  end

  local database = dir .. "/games.sqlite"
  local function sqlite3(sql)
    local output = vim.fn.system({ "sqlite3", database, sql })
    if vim.v.shell_error ~= 0 then
      fail("sqlite3 failed on " .. sql .. ": " .. output)
    end
  end
  sqlite3([[
    CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL, team TEXT);
    INSERT INTO players(name, score, team) VALUES ('Blob', 20, NULL), ('Blob Jr', 100, 'red'), ('Blob Sr', 60, 'blue');
  ]])

  -- The command comes from vim.g.sqlive_command.
  vim.g.sqlive_command = { bin }

  -- 0. A bad command is a message, not a stack trace.
  vim.cmd("SqliveTrace sideways")
  wait_for_message("use :SqliveTrace on", vim.log.levels.ERROR)
  say("ok: a wrong argument is a message")

  -- 1. :SqliveOpen starts sqlive and opens the database.
  vim.cmd("SqliveOpen " .. vim.fn.fnameescape(database))
  wait_for_message("opened .*games%.sqlite %(SQLite [%d.]+, %a+ journal%)")
  say("ok: :SqliveOpen")

  -- 2. :SqliveQuery runs the statement under the cursor of a .sql buffer
  -- (attached to the language server) and shows an aligned table.
  local path = dir .. "/queries.sql"
  local file = assert(io.open(path, "w"))
  file:write(table.concat({
    "SELECT 1;",
    "SELECT name, score, team",
    "  FROM players ORDER BY score DESC;",
    "",
    "SELECT * FROM nosuch;",
    "SELECT name FROM players WHERE team = 'red';",
    "SELECT 2 AS two; SELECT 3 AS three;",
  }, "\n") .. "\n")
  file:close()
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local buffer = vim.api.nvim_get_current_buf()
  wait_for("the .sql buffer was not attached to sqlive", function()
    return #vim.lsp.get_active_clients({ bufnr = buffer }) == 1
  end)
  -- The server's own diagnostic, through the client the plugin started.
  wait_for("no diagnostic on the missing table", function()
    local all = vim.diagnostic.get(buffer)
    return #all == 1 and all[1].message == "no such table: nosuch" and all[1].lnum == 4
  end, function()
    return vim.inspect(vim.diagnostic.get(buffer))
  end)
  say("ok: the language server's diagnostic")

  vim.api.nvim_win_set_cursor(0, { 3, 4 }) -- inside the two-line statement
  vim.cmd("SqliveQuery")
  expect_lines("sqlive://result", {
    "name    | score | team",
    "--------+-------+-----",
    "Blob Jr |   100 | red",
    "Blob Sr |    60 | blue",
    "Blob    |    20 | NULL",
  }, 2)
  local summary = lines_of("sqlive://result")[7] or ""
  if not summary:match("^%(3 rows, [%d.]+ ms%)$") then
    fail("the result's summary line is " .. summary)
  end
  if vim.api.nvim_get_current_buf() ~= buffer then
    fail("the cursor left the query's window")
  end
  say("ok: :SqliveQuery on the statement under the cursor")

  expect_lines("sqlive://result", { "-- SELECT name, score, team …" })

  -- A range runs just its lines.
  vim.cmd("6SqliveQuery")
  expect_lines("sqlive://result", { "-- SELECT name FROM players WHERE team = 'red';", "name", "-------", "Blob Jr" })
  say("ok: :SqliveQuery on a range")

  -- A character-wise selection runs just the selected text.
  vim.api.nvim_win_set_cursor(0, { 7, 17 })
  vim.cmd([[execute "normal! v$\<Esc>"]])
  vim.cmd("'<,'>SqliveQuery")
  expect_lines("sqlive://result", { "-- SELECT 3 AS three;", "three", "-----", "    3" }, 1)
  say("ok: :SqliveQuery on a visual selection")

  -- An SQL error is SQLite's message, shown as an error message.
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  vim.cmd("SqliveQuery")
  wait_for_message("no such table: nosuch", vim.log.levels.ERROR)
  say("ok: an SQL error is a message")

  -- 3. :SqliveWatch: a buffer sqlive://leaders, re-rendered when another
  -- process writes, keeping its cursor.
  vim.cmd("SqliveWatch leaders SELECT name, score FROM players ORDER BY score DESC")
  expect_lines("sqlive://leaders", {
    "name    | score",
    "--------+------",
    "Blob Jr |   100",
    "Blob Sr |    60",
    "Blob    |    20",
    "(3 rows)",
  }, 2)
  local header = lines_of("sqlive://leaders")[1]
  if not header:match("^%-%- leaders · version 1 · registered · tables players · %d%d:%d%d:%d%d$") then
    fail("the watch buffer's first line is " .. header)
  end
  local leaders = buffer_named("sqlive://leaders")
  local window = vim.fn.bufwinid(leaders)
  if window == -1 then
    fail("the watch buffer is not shown")
  end
  vim.api.nvim_win_set_cursor(window, { 4, 2 })

  sqlite3("INSERT INTO players(name, score) VALUES ('Blob III', 80);")
  expect_lines("sqlive://leaders", {
    "name     | score",
    "---------+------",
    "Blob Jr  |   100",
    "Blob III |    80",
    "Blob Sr  |    60",
    "Blob     |    20",
    "(4 rows)",
  }, 2)
  header = lines_of("sqlive://leaders")[1]
  if not header:match("^%-%- leaders · version 2 · external · .*%d%d:%d%d:%d%d · [%d.]+ ms$") then
    fail("after the sqlite3 shell's insert, the watch buffer's first line is " .. header)
  end
  local cursor = vim.api.nvim_win_get_cursor(window)
  if cursor[1] ~= 4 or cursor[2] ~= 2 then
    fail("the watch buffer's cursor moved to " .. vim.inspect(cursor))
  end
  say("ok: the watch buffer shows another process's row, cursor kept")

  -- A write from the plugin itself refreshes it too (cause: local).
  vim.cmd("SqliveWatch leaders SELECT name, score FROM players WHERE score >= 80 ORDER BY score DESC")
  expect_lines("sqlive://leaders", { "name     | score", "---------+------", "Blob Jr  |   100", "Blob III |    80", "(2 rows)" }, 2)
  say("ok: :SqliveWatch with a known name redefines it in place")

  -- 4. :SqliveExplain: the plan tree and what is costly in it.
  vim.api.nvim_win_set_cursor(0, { 6, 0 })
  vim.cmd("SqliveExplain")
  wait_for("the plan buffer did not show a full scan", function()
    local text = table.concat(lines_of("sqlive://plan"), "\n")
    return text:find("SCAN players", 1, true) ~= nil and text:find("full scan of players", 1, true) ~= nil
  end, function()
    return table.concat(lines_of("sqlive://plan"), "\n")
  end)
  if lines_of("sqlive://plan")[1] ~= "-- SELECT name FROM players WHERE team = 'red';" then
    fail("the plan buffer's first line is " .. tostring(lines_of("sqlive://plan")[1]))
  end
  -- The advice SQLite's planner gives, and the plan with that index.
  expect_lines("sqlive://plan", {
    "-- advice: CREATE INDEX players_team ON players(team);",
    "--   SEARCH players USING INDEX players_team (team=?)",
  }, #lines_of("sqlive://plan") - 1)
  say("ok: :SqliveExplain shows the plan, its full scan and the index that would help")

  -- 5. :SqliveTrace on: statements appear in sqlive://trace.
  vim.cmd("SqliveTrace profile")
  wait_for_message("trace profile")
  vim.cmd("6SqliveQuery")
  wait_for("the trace buffer did not show the statement", function()
    for _, line in ipairs(lines_of("sqlive://trace")) do
      if line:match("^%d%d:%d%d:%d%d  user  [%d.]+ ms  1 row  SELECT name FROM players WHERE team = 'red'$") then
        return true
      end
    end
    return false
  end, function()
    return table.concat(lines_of("sqlive://trace"), "\n")
  end)
  vim.cmd("SqliveTrace off")
  wait_for_message("trace off")
  say("ok: :SqliveTrace")

  -- 6. :SqliveWatch with no arguments watches the statement under the
  -- cursor, named FILE:LINE.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd("SqliveWatch")
  expect_lines("sqlive://queries.sql:1", { "1", "-", "1", "(1 row)" }, 2)
  say("ok: :SqliveWatch on the statement under the cursor")

  -- 7. Another process drops the watched table: the buffer says so (and a
  -- warning); the table coming back brings the rows back.
  sqlite3("DROP TABLE players;")
  wait_for_message("leaders: no such table: players", vim.log.levels.WARN)
  wait_for("the watch buffer does not show the error", function()
    return lines_of("sqlive://leaders")[2] == "-- error: no such table: players"
  end, function()
    return table.concat(lines_of("sqlive://leaders"), "\n")
  end)
  sqlite3("CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT, score INTEGER); INSERT INTO players(name, score) VALUES ('Zed', 90);")
  expect_lines("sqlive://leaders", { "name | score", "-----+------", "Zed  |    90", "(1 row)" }, 2)
  say("ok: a dropped table is shown as an error, and its return as rows")

  -- 8. :SqliveUnwatch: the live query is gone from sqlive.
  vim.cmd("SqliveUnwatch leaders")
  wait_for_message("stopped watching leaders")
  local lsp_client = vim.lsp.get_active_clients({ name = "sqlive" })[1]
  local list = lsp_client.request_sync("liveQuery/list", {}, timeout)
  local names = {}
  for _, query in ipairs(list.result.liveQueries) do
    table.insert(names, query.name)
  end
  if not vim.deep_equal(names, { "queries.sql:1" }) then
    fail("after :SqliveUnwatch leaders, sqlive has " .. vim.inspect(names))
  end
  if not lines_of("sqlive://leaders")[1]:find("unwatched", 1, true) then
    fail("the unwatched buffer does not say so: " .. lines_of("sqlive://leaders")[1])
  end
  vim.cmd("SqliveUnwatch leaders")
  wait_for_message("no live query named leaders", vim.log.levels.ERROR)
  say("ok: :SqliveUnwatch")

  -- Nothing the plugin did ended in a Lua error.
  local text = messages_text()
  if text:find("stack traceback", 1, true) or text:find("internal error", 1, true) then
    fail("a Lua error reached the user:\n" .. text)
  end
  require("sqlive").stop()
  vim.wait(timeout, function()
    return #vim.lsp.get_active_clients({ name = "sqlive" }) == 0
  end, 20)
end

harness.run(main)
