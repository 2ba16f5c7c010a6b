-- Headless Neovim with the sample plugin: each read-only statement's live
-- result at the end of its line, and the new result after another process
-- (the sqlite3 shell) writes. On Neovim 0.10 and later through Neovim's own
-- inlay hints (vim.lsp.inlay_hint), before through the plugin's virtual text.
--
-- Run: SQLIVE_BIN=/path/to/sqlive SQLIVE_DIR=<an empty directory> \
--        nvim --headless --clean --cmd "set rtp^=Samples/editors/neovim" -c "luafile inline.lua"
-- Exits 0 when every check passes; otherwise 1, with "FAIL: ..." on stderr.

local timeout = 20000 -- ms; only a hang reaches it

local harness = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local say, fail = harness.say, harness.fail

local directory = os.getenv("SQLIVE_DIR")
local database = directory .. "/inline.sqlite"

-- What the user sees at the end of each line: inlay hints or virtual text.
local function inline_texts(buffer)
  local texts = {}
  if vim.lsp.inlay_hint and vim.fn.has("nvim-0.10") == 1 then
    for _, item in ipairs(vim.lsp.inlay_hint.get({ bufnr = buffer })) do
      local label = item.inlay_hint.label
      if type(label) ~= "string" then
        local parts = {}
        for _, part in ipairs(label) do
          table.insert(parts, part.value)
        end
        label = table.concat(parts)
      end
      texts[item.inlay_hint.position.line] = label
    end
  else
    local namespace = vim.api.nvim_create_namespace("sqlive_inline")
    for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buffer, namespace, 0, -1, { details = true })) do
      texts[mark[2]] = vim.trim(mark[4].virt_text[1][1])
    end
  end
  return texts
end

local function wait_for(description, predicate, details)
  if not vim.wait(timeout, predicate, 20) then
    fail(description .. " (waited " .. timeout / 1000 .. " s)" .. (details and ("\n" .. details()) or ""))
  end
end

harness.run(function()
  vim.fn.system({ "sqlite3", database,
    "CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT, score INT); "
      .. "INSERT INTO players(name, score) VALUES ('Ann', 12), ('Bob', 7);" })
  if vim.v.shell_error ~= 0 then
    fail("cannot make the database")
  end
  vim.g.sqlive_command = { os.getenv("SQLIVE_BIN") }
  local file = directory .. "/inline.sql"
  vim.fn.writefile({
    "-- sqlive: database=" .. database,
    "SELECT count(*) FROM players;",
    "INSERT INTO players(name, score) VALUES ('Eve', 1);",
    "SELECT name FROM players ORDER BY score DESC;",
  }, file)
  vim.cmd("edit " .. file)
  local buffer = vim.api.nvim_get_current_buf()
  local function shown()
    return vim.inspect(inline_texts(buffer))
  end
  wait_for("the inline results", function()
    local texts = inline_texts(buffer)
    return texts[1] == "→ 2" and texts[3] == "→ 2 rows: Ann, Bob"
  end, shown)
  if inline_texts(buffer)[2] ~= nil then
    fail("a statement that writes shows a result: " .. shown())
  end
  say("ok: each read-only statement shows its result (" .. (vim.fn.has("nvim-0.10") == 1 and "inlay hints" or "virtual text") .. ")")

  vim.fn.system({ "sqlite3", database, "INSERT INTO players(name, score) VALUES ('Cy', 30);" })
  wait_for("the result after another process's write", function()
    local texts = inline_texts(buffer)
    return texts[1] == "→ 3" and texts[3] == "→ 3 rows: Cy, Ann, Bob"
  end, shown)
  local count = vim.fn.system({ "sqlite3", database, "SELECT count(*) FROM players" })
  if vim.trim(count) ~= "3" then
    fail("the INSERT ran: " .. count)
  end
  say("ok: another process's write shows at once")
end)
