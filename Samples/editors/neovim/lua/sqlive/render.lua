-- Turning sqlive's answers into buffer lines: aligned tables, plan trees,
-- trace lines. Pure functions of their arguments; nothing here talks to
-- sqlive or touches a buffer.

local M = {}

local function is_null(value)
  return value == nil or value == vim.NIL
end

--- A cell as text: NULL for SQL NULL, `<blob N bytes>` for a BLOB, numbers
--- as Lua prints them (integers without a decimal point).
function M.cell(value)
  if is_null(value) then
    return "NULL"
  end
  local kind = type(value)
  if kind == "number" then
    if value == math.floor(value) and math.abs(value) < 2 ^ 53 then
      return string.format("%d", value)
    end
    return tostring(value)
  elseif kind == "table" and value["$blob"] then
    local base64 = value["$blob"]
    local padding = select(2, base64:gsub("=", ""))
    return string.format("<blob %d bytes>", math.floor(#base64 * 3 / 4) - padding)
  elseif kind == "string" then
    -- One cell, one line.
    return (value:gsub("\r?\n", "↵"):gsub("\t", " "))
  end
  return vim.inspect(value)
end

local function pad(text, width, right)
  local gap = width - vim.fn.strdisplaywidth(text)
  if gap <= 0 then
    return text
  end
  return right and (string.rep(" ", gap) .. text) or (text .. string.rep(" ", gap))
end

--- An aligned table, as lines: a header, a rule, one line per row; numbers
--- right-aligned. `result` is `{columns, rows, truncated?}`.
function M.table(result)
  local columns = result.columns or {}
  local rows = result.rows or {}
  if #columns == 0 then
    return {}
  end
  local widths, numeric, cells = {}, {}, {}
  for c, name in ipairs(columns) do
    widths[c] = vim.fn.strdisplaywidth(name)
    numeric[c] = #rows > 0
  end
  for r, row in ipairs(rows) do
    cells[r] = {}
    for c = 1, #columns do
      local value = row[c]
      local text = M.cell(value)
      cells[r][c] = text
      widths[c] = math.max(widths[c], vim.fn.strdisplaywidth(text))
      if not is_null(value) and type(value) ~= "number" then
        numeric[c] = false
      end
    end
  end
  local lines = {}
  local header, rule = {}, {}
  for c, name in ipairs(columns) do
    header[c] = pad(name, widths[c], numeric[c])
    rule[c] = string.rep("-", widths[c])
  end
  table.insert(lines, (table.concat(header, " | "):gsub("%s+$", "")))
  table.insert(lines, table.concat(rule, "-+-"))
  for _, row in ipairs(cells) do
    local padded = {}
    for c, text in ipairs(row) do
      padded[c] = pad(text, widths[c], numeric[c])
    end
    table.insert(lines, (table.concat(padded, " | "):gsub("%s+$", "")))
  end
  return lines
end

local function plural(count, noun)
  return string.format("%d %s%s", count, noun, count == 1 and "" or "s")
end

local function milliseconds(value)
  if type(value) ~= "number" then
    return nil
  end
  return string.format("%.1f ms", value)
end

--- The lines `:SqliveQuery` shows for `query/execute`'s (or `sqlive.run`'s)
--- result: each statement's table and a summary line.
function M.results(sql, answer)
  local lines = {}
  local first = vim.split(vim.trim(sql or ""), "\n")[1] or ""
  table.insert(lines, "-- " .. first .. (first ~= vim.trim(sql or "") and " …" or ""))
  for index, result in ipairs(answer.results or {}) do
    if index > 1 then
      table.insert(lines, "")
    end
    local summary = {}
    if result.columns and #result.columns > 0 then
      vim.list_extend(lines, M.table(result))
      table.insert(summary, plural(#(result.rows or {}), "row"))
      if result.truncated then
        table.insert(summary, "truncated")
      end
    else
      table.insert(summary, plural(result.changes or 0, "row") .. " changed")
    end
    table.insert(summary, milliseconds(result.elapsedMs))
    table.insert(lines, "(" .. table.concat(summary, ", ") .. ")")
  end
  if #(answer.results or {}) == 0 then
    table.insert(lines, "(no statement)")
  end
  return lines
end

--- The first line of a watch buffer: name, version, cause, time.
function M.watch_header(name, fields)
  local parts = { "-- " .. name, "version " .. tostring(fields.version or "?") }
  if fields.cause then
    table.insert(parts, fields.cause)
  end
  if fields.tables and #fields.tables > 0 then
    table.insert(parts, "tables " .. table.concat(fields.tables, ", "))
  end
  table.insert(parts, fields.time or os.date("%H:%M:%S"))
  local elapsed = milliseconds(fields.elapsedMs)
  if elapsed then
    table.insert(parts, elapsed)
  end
  return table.concat(parts, " · ")
end

--- A watch buffer's lines: the header, then the rows.
function M.watch(name, snapshot, fields)
  local lines = { M.watch_header(name, fields) }
  if fields.error then
    table.insert(lines, "-- error: " .. fields.error)
  end
  vim.list_extend(lines, M.table(snapshot))
  table.insert(lines, "(" .. plural(#(snapshot.rows or {}), "row") .. ")")
  return lines
end

-- A plan tree drawn from its nodes {id, parent, detail}, indented.
local function tree(nodes, prefix)
  local lines, depth = {}, { [0] = -1 }
  for _, node in ipairs(nodes or {}) do
    depth[node.id] = (depth[node.parent] or -1) + 1
    table.insert(lines, prefix .. string.rep("  ", depth[node.id]) .. node.detail)
  end
  return lines
end

--- `sqlive.explain`'s answer: the plan tree, its costly steps, then the
--- indexes SQLite's planner would use, each with the plan it would give.
function M.plan(sql, answer)
  local lines = { "-- " .. (vim.split(vim.trim(sql or ""), "\n")[1] or "") }
  if answer.rendered then
    vim.list_extend(lines, vim.split(answer.rendered, "\n"))
  else
    vim.list_extend(lines, tree(answer.plan, ""))
  end
  for _, hint in ipairs(answer.hints or {}) do
    table.insert(lines, "⚠ " .. hint)
  end
  for _, advice in ipairs(answer.advice or {}) do
    table.insert(lines, "-- advice: " .. advice.sql)
    vim.list_extend(lines, tree(advice.planAfter, "--   "))
  end
  return lines
end

--- One `trace/statement` notification as a line.
function M.trace(params)
  local parts = { os.date("%H:%M:%S"), params.origin or "?" }
  local elapsed = milliseconds(params.elapsedMs)
  if elapsed then
    table.insert(parts, elapsed)
  end
  if type(params.rows) == "number" then
    table.insert(parts, plural(params.rows, "row"))
  end
  table.insert(parts, (tostring(params.sql or ""):gsub("%s*\n%s*", " ")))
  return table.concat(parts, "  ")
end

return M
