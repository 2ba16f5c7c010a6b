-- sqlive's commands and the autocommand that gives SQL buffers the language
-- server. The work is in lua/sqlive/init.lua.

if vim.g.loaded_sqlive then
  return
end
vim.g.loaded_sqlive = true

if vim.fn.has("nvim-0.7") ~= 1 then
  vim.notify("sqlive: the plugin needs Neovim 0.7 or later", vim.log.levels.WARN)
  return
end

local function sqlive()
  return require("sqlive")
end

local function define(name, fn, opts)
  vim.api.nvim_create_user_command(name, function(args)
    sqlive().guarded(fn)(args)
  end, opts)
end

define("SqliveOpen", function(args)
  sqlive().open(args.args)
end, { nargs = 1, complete = "file", desc = "sqlive: open a database" })

define("SqliveQuery", function(args)
  sqlive().query(args)
end, { range = true, desc = "sqlive: run the statement under the cursor, the selection or the paragraph" })

define("SqliveWatch", function(args)
  sqlive().watch(args)
end, { nargs = "*", range = true, desc = "sqlive: watch a live query (name and SQL, or the statement under the cursor)" })

define("SqliveUnwatch", function(args)
  sqlive().unwatch(args.args)
end, {
  nargs = 1,
  complete = function()
    return sqlive().watch_names()
  end,
  desc = "sqlive: stop a live query",
})

define("SqliveExplain", function(args)
  sqlive().explain(args)
end, { range = true, desc = "sqlive: the query plan of the statement under the cursor" })

define("SqliveTrace", function(args)
  sqlive().trace(args.args)
end, {
  nargs = 1,
  complete = function()
    return { "on", "profile", "off" }
  end,
  desc = "sqlive: trace statements in a buffer",
})

local group = vim.api.nvim_create_augroup("sqlive", { clear = true })
vim.api.nvim_create_autocmd("FileType", {
  group = group,
  pattern = "*",
  callback = function(event)
    sqlive().guarded(sqlive().buffer_opened)(event.buf)
  end,
})
