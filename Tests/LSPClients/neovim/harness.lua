-- What the headless scripts here share: a line of progress on stderr, a
-- failure that ends the script with its message, and the ending — "PASS"
-- and exit 0, or "FAIL: ..." (a Lua error with its traceback) and exit 1.
-- Loaded with dofile by each script, from this directory.

local M = {}

function M.say(line)
  io.stderr:write(line .. "\n")
end

function M.fail(message)
  error({ sqlive_failure = message }, 0)
end

function M.run(main)
  local ok, problem = xpcall(main, function(e)
    if type(e) == "table" and e.sqlive_failure then
      return e.sqlive_failure
    end
    return debug.traceback(tostring(e), 2)
  end)
  if ok then
    M.say("PASS")
    vim.cmd("qall!")
  else
    M.say("FAIL: " .. tostring(problem))
    vim.cmd("cquit 1")
  end
end

return M
