-- workload-map's resolver algorithms in Lua 5.1, for exported scripts: a definition (the table D
-- written by workload_map.resolve.lua) read against an object, as workload_map.resolve does it in
-- Python: instances, pod specs, replica counts, requests per pod, status phases. It is a chunk
-- taking the jq runtime J and returning the table R.
local J = ...
local R = {}
local NULL, EA, EO = J.NULL, J.EA, J.EO
local floor = math.floor
local INT32_MAX = 2147483647

local function fail(msg) error(msg, 0) end
R.fail = fail

-- evaluation ------------------------------------------------------------------------------------

local function where(D, comp, field)
  local w = 'karta "' .. D.name .. '"'
  if comp then w = w .. ', component "' .. comp .. '"' end
  if field then w = w .. ", " .. field end
  return w
end

local function err_text(e)
  if type(e) == "table" and e.jq ~= nil then
    local v = e.jq
    if type(v) == "string" then return v end
    return J.tojson(v)
  end
  return tostring(e)
end

-- every output of filter f on data (at most J.MAX_RESULTS), within one evaluation's step budget
function R.all(D, comp, field, f, data)
  J.start()
  local ok, out, n = pcall(J.collect, f, data)
  J.stop()
  if not ok then fail(where(D, comp, field) .. ": failed to evaluate: " .. err_text(out)) end
  return out, n
end

-- the first output, or nil when there is none
function R.first(D, comp, field, f, data)
  J.start()
  local ok, v = pcall(J.first_of, f, data)
  J.stop()
  if not ok then fail(where(D, comp, field) .. ": failed to evaluate: " .. err_text(v)) end
  return v
end

-- jq tostring as the resolver uses it: strings as they are, the rest compact JSON, keys sorted
local function text(v)
  if type(v) == "string" then return v end
  return J.tojson_sorted(v)
end
R.text = text

-- instances -------------------------------------------------------------------------------------

function R.instance_ids(D, c, data)
  if not c.instance_id then return {""}, 1 end
  local results, n = R.all(D, c.name, "instanceIdPath", c.instance_id, data)
  local ids, seen = {}, {}
  for i = 1, n do
    local v = results[i]
    local id
    if type(v) == "string" then id = v
    elseif type(v) == "number" then id = J.numtext(v)
    else fail(where(D, c.name, "instanceIdPath") .. ": instance id at index " .. (i - 1) .. " is " .. J.tname(v) .. ", expected a string") end
    if id == "" then fail(where(D, c.name, "instanceIdPath") .. ": instance id path contained empty string values") end
    if seen[id] then fail(where(D, c.name, "instanceIdPath") .. ": instance id path contained duplicate values") end
    seen[id] = true
    ids[i] = id
  end
  return ids, n
end

-- results of one aspect zipped with the instances (a single instance with no result: unset)
local function zipped(D, c, field, results, n, ids_n)
  if n == ids_n then return results end
  if n == 0 and not c.instance_id then return {} end
  fail(where(D, c.name, field) .. ": instance ids count (" .. ids_n .. ") does not match results count (" .. n .. ")")
end

local function object_or_nil(D, c, field, i, v)
  if v == nil or v == NULL then return nil end
  if J.isobj(v) then return v end
  fail(where(D, c.name, field) .. ": result at index " .. (i - 1) .. " is " .. J.tname(v) .. ", expected an object")
end

local FRAGMENT_TYPES = {
  schedulerName = "string", labels = "object", annotations = "object", resources = "object",
  resourceClaims = "array", podAffinity = "object", nodeAffinity = "object", containers = "array",
  container = "object", priorityClassName = "string", image = "string",
}

local function fragment_ok(v, want)
  if want == "string" then return type(v) == "string" end
  if want == "array" then return J.isarr(v) and v ~= NULL end
  return J.isobj(v) and v ~= NULL
end

-- per instance {template=, pod_spec=, metadata=, fragments=} (nil when unset)
function R.specs(D, c, data, ids_n)
  local out = {}
  for i = 1, ids_n do out[i] = {} end
  for _, aspect in ipairs({{"template", "specDefinition.podTemplateSpecPath"}, {"pod_spec", "specDefinition.podSpecPath"},
                           {"metadata", "specDefinition.metadataPath"}}) do
    local f = c[aspect[1]]
    if f then
      local results, n = R.all(D, c.name, aspect[2], f, data)
      local z = zipped(D, c, aspect[2], results, n, ids_n)
      for i = 1, ids_n do out[i][aspect[1]] = object_or_nil(D, c, aspect[2], i, z[i]) end
    end
  end
  if c.fragments then
    local columns, count = {}, 0
    for _, fr in ipairs(c.fragments) do
      local results, n = R.all(D, c.name, fr.field, fr.filter, data)
      if n > count then count = n end
      columns[#columns + 1] = {fr, results, n}
    end
    if count ~= ids_n and not (count == 0 and not c.instance_id) then
      fail(where(D, c.name, "specDefinition.fragmentedPodSpecDefinition") .. ": instance ids count (" .. ids_n
        .. ") does not match results count (" .. count .. ")")
    end
    for i = 1, ids_n do
      local frag, any = {}, false
      for _, col in ipairs(columns) do
        local fr, results, n = col[1], col[2], col[3]
        local v = (i <= n) and results[i] or nil
        if v == NULL then v = nil end
        if v ~= nil then
          if not fragment_ok(v, FRAGMENT_TYPES[fr.name]) then
            fail(where(D, c.name, fr.field) .. ": result at index " .. (i - 1) .. " is " .. J.tname(v) .. ", expected a " .. FRAGMENT_TYPES[fr.name])
          end
          frag[fr.name] = v
          any = true
        end
      end
      out[i].fragments = frag
      out[i].fragmented = any
    end
  end
  return out
end

-- a replica count as the resolver reads it: nil = unset
local function parse_replicas(D, c, field, v, i)
  if v == NULL or v == nil then return nil end
  local n
  if type(v) == "boolean" then
    fail(where(D, c.name, field) .. ": replicas value at index " .. (i - 1) .. " is a boolean, not a number")
  elseif type(v) == "number" then
    if v ~= floor(v) then fail(where(D, c.name, field) .. ": replicas value at index " .. (i - 1) .. " is not an integer") end
    n = v
  elseif type(v) == "string" then
    if not string.match(v, "^[%+%-]?%d+$") then
      fail(where(D, c.name, field) .. ': replicas value "' .. v .. '" at index ' .. (i - 1) .. " is not a number")
    end
    n = tonumber(v)
  else
    fail(where(D, c.name, field) .. ": replicas value at index " .. (i - 1) .. " is " .. J.tname(v) .. ", not a number")
  end
  if n < 0 then fail(where(D, c.name, field) .. ": replicas value at index " .. (i - 1) .. " is negative") end
  if n > INT32_MAX then fail(where(D, c.name, field) .. ": replicas value at index " .. (i - 1) .. " is out of range") end
  return n
end

-- per instance {replicas=, min=, max=} (nil = unset)
function R.scales(D, c, data, ids_n)
  local out = {}
  if not (c.replicas or c.min_replicas or c.max_replicas) then
    for i = 1, ids_n do out[i] = {} end
    return out
  end
  local columns, count = {}, 0
  for _, aspect in ipairs({{"replicas", "scaleDefinition.replicasPath"}, {"min_replicas", "scaleDefinition.minReplicasPath"},
                           {"max_replicas", "scaleDefinition.maxReplicasPath"}}) do
    local parsed, n = {}, 0
    local f = c[aspect[1]]
    if f then
      local results
      results, n = R.all(D, c.name, aspect[2], f, data)
      for i = 1, n do parsed[i] = parse_replicas(D, c, aspect[2], results[i], i) end
    end
    columns[aspect[1]] = {parsed, n}
    if n > count then count = n end
  end
  if count ~= ids_n then
    if count == 0 and not c.instance_id then
      for i = 1, ids_n do out[i] = {} end
      return out
    end
    fail(where(D, c.name, "scaleDefinition") .. ": instance ids count (" .. ids_n .. ") does not match results count (" .. count .. ")")
  end
  for i = 1, count do
    out[i] = {replicas = columns.replicas[1][i], min = columns.min_replicas[1][i], max = columns.max_replicas[1][i]}
  end
  return out
end

local function desired(scale)
  if scale.replicas ~= nil then return scale.replicas end
  if scale.min ~= nil then return scale.min end
  return 1
end
R.desired = desired

-- quantities: exact decimal digit strings of nano-units --------------------------------------------

local Q = {}
R.Q = Q

local function strip(s)
  local i = 1
  while i < #s and string.sub(s, i, i) == "0" do i = i + 1 end
  return string.sub(s, i)
end

local function mag_cmp(a, b)
  if #a ~= #b then return #a < #b and -1 or 1 end
  if a == b then return 0 end
  return a < b and -1 or 1
end

local function mag_add(a, b)
  local out, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local s = carry
    if i > 0 then s = s + string.byte(a, i) - 48; i = i - 1 end
    if j > 0 then s = s + string.byte(b, j) - 48; j = j - 1 end
    out[#out + 1] = string.char(48 + s % 10)
    carry = floor(s / 10)
  end
  return strip(string.reverse(table.concat(out)))
end

local function mag_sub(a, b) -- a >= b
  local out, borrow, i, j = {}, 0, #a, #b
  while i > 0 do
    local s = string.byte(a, i) - 48 - borrow
    if j > 0 then s = s - (string.byte(b, j) - 48); j = j - 1 end
    if s < 0 then s = s + 10; borrow = 1 else borrow = 0 end
    out[#out + 1] = string.char(48 + s)
    i = i - 1
  end
  return strip(string.reverse(table.concat(out)))
end

local function mag_mul(a, m) -- m a small integer
  local out, carry = {}, 0
  for i = #a, 1, -1 do
    local s = (string.byte(a, i) - 48) * m + carry
    out[#out + 1] = string.char(48 + s % 10)
    carry = floor(s / 10)
  end
  while carry > 0 do out[#out + 1] = string.char(48 + carry % 10); carry = floor(carry / 10) end
  return strip(string.reverse(table.concat(out)))
end

local function mag_divmod(a, m) -- m a small integer
  local out, rem = {}, 0
  for i = 1, #a do
    local cur = rem * 10 + (string.byte(a, i) - 48)
    out[i] = string.char(48 + floor(cur / m))
    rem = cur % m
  end
  return strip(table.concat(out)), rem
end

local function zeros(n)
  local t = {}
  for i = 1, n do t[i] = "0" end
  return table.concat(t)
end

-- signed values {neg=, mag=}
local function signed(neg, mag) if mag == "0" then neg = false end return {neg = neg, mag = mag} end
Q.zero = signed(false, "0")

function Q.add(x, y)
  if x.neg == y.neg then return signed(x.neg, mag_add(x.mag, y.mag)) end
  local c = mag_cmp(x.mag, y.mag)
  if c == 0 then return Q.zero end
  if c > 0 then return signed(x.neg, mag_sub(x.mag, y.mag)) end
  return signed(y.neg, mag_sub(y.mag, x.mag))
end

function Q.cmp(x, y)
  if x.neg ~= y.neg then return x.neg and -1 or 1 end
  local c = mag_cmp(x.mag, y.mag)
  if x.neg then return -c end
  return c
end

-- divide by 10^k rounding the magnitude up (Quantity.MilliValue / Value)
function Q.ceil_shift(x, k)
  if #x.mag <= k then
    if x.mag == "0" then return Q.zero end
    return signed(x.neg, "1")
  end
  local head, tail = string.sub(x.mag, 1, #x.mag - k), string.sub(x.mag, #x.mag - k + 1)
  if string.find(tail, "[1-9]") then head = mag_add(head, "1") end
  return signed(x.neg, strip(head))
end

local BINARY = {Ki = 1, Mi = 2, Gi = 3, Ti = 4, Pi = 5, Ei = 6}
local DECIMAL = {n = -9, u = -6, m = -3, [""] = 0, k = 3, M = 6, G = 9, T = 12, P = 15, E = 18}

local function bad_quantity(v) fail("quantity " .. J.tojson(v) .. " is not a valid Kubernetes quantity") end

-- a quantity (string or JSON number) as exact nano-units
function Q.parse(v)
  local text
  if type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge then bad_quantity(v) end
    if v == floor(v) then text = string.format("%.0f", v) else text = J.numtext(v) end
  elseif type(v) == "string" then
    text = string.match(v, "^%s*(.-)%s*$")
  else
    bad_quantity(v)
  end
  local sign, int, frac, suffix = string.match(text, "^([%+%-]?)(%d*)%.?(%d*)(.*)$")
  if sign == nil or (int == "" and frac == "") then bad_quantity(v) end
  local dot = string.find(text, ".", 1, true)
  if dot and not string.match(text, "^[%+%-]?%d*%.%d*") then bad_quantity(v) end
  local scale10, mult2 = -#frac, 0
  if BINARY[suffix] then
    mult2 = BINARY[suffix]
  elseif string.match(suffix, "^[eE][%+%-]?%d+$") then
    local e = tonumber(string.sub(suffix, 2))
    if math.abs(e) > 1000 then fail("quantity " .. J.tojson(v) .. " is out of range") end
    scale10 = scale10 + e
  elseif DECIMAL[suffix] then
    scale10 = scale10 + DECIMAL[suffix]
  else
    bad_quantity(v)
  end
  scale10 = scale10 + 9
  local mag = strip((int .. frac) ~= "" and (int .. frac) or "0")
  for _ = 1, mult2 do mag = mag_mul(mag, 1024) end
  local q
  if scale10 >= 0 then
    q = signed(false, mag == "0" and "0" or strip(mag .. zeros(scale10)))
  else
    q = Q.ceil_shift(signed(false, mag), -scale10)
  end
  return signed(sign == "-", q.mag)
end

local SUFFIX10 = {"", "k", "M", "G", "T", "P", "E"}
local SUFFIX2 = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
local INT64_MAX = "9223372036854775807"

local function saturate(mag)
  if mag_cmp(mag, INT64_MAX) > 0 then return INT64_MAX end
  return mag
end

-- Kubernetes' canonical text of an integer (DecimalSI)
local function format_decimal(mag)
  if mag == "0" then return "0" end
  local e = 1
  while e < #SUFFIX10 and #mag > 3 and string.sub(mag, -3) == "000" do
    mag = string.sub(mag, 1, #mag - 3)
    e = e + 1
  end
  return mag .. SUFFIX10[e]
end

local function format_binary(mag)
  if mag_cmp(mag, "1024") < 0 then return format_decimal(mag) end
  local e = 1
  while e < #SUFFIX2 do
    local q, r = mag_divmod(mag, 1024)
    if r ~= 0 then break end
    mag = q
    e = e + 1
  end
  return mag .. SUFFIX2[e]
end

-- a ResourceList value: cpu in millis, binary for memory, ephemeral-storage and hugepages-*
function Q.text(name, mag)
  mag = saturate(mag)
  if name == "cpu" then
    if string.sub(mag, -3) == "000" and #mag > 3 then return format_decimal(string.sub(mag, 1, #mag - 3)) end
    if mag_cmp(mag, "1000") == 0 then return "1" end
    return mag .. "m"
  end
  if name == "memory" or name == "ephemeral-storage" or string.sub(name, 1, 10) == "hugepages-" then
    return format_binary(mag)
  end
  return format_decimal(mag)
end

-- requests per pod ------------------------------------------------------------------------------

local function quantities_into(out, section)
  if not J.isobj(section) or section == NULL then return end
  for name, v in pairs(section) do
    if v ~= NULL then out[name] = Q.parse(v) end
  end
end

-- a ResourceRequirements' effective requests: requests, falling back per resource to limits
local function requirement_requests(res)
  local out = {}
  if not J.isobj(res) or res == NULL then return out end
  local limits, requests = res.limits, res.requests
  if limits ~= nil and J.truthy(limits) and J.isobj(limits) then quantities_into(out, limits) end
  if requests ~= nil and J.truthy(requests) and J.isobj(requests) then quantities_into(out, requests) end
  return out
end

local function container_requests(c)
  if not J.isobj(c) or c == NULL then return {} end
  local res = c.resources
  if res == nil or not J.isobj(res) or res == NULL or next(res) == nil then return {} end
  return requirement_requests(res)
end

local function add_into(acc, add)
  for k, v in pairs(add) do acc[k] = acc[k] and Q.add(acc[k], v) or v end
end

local function max_into(acc, other)
  for k, v in pairs(other) do
    if acc[k] == nil or Q.cmp(v, acc[k]) > 0 then acc[k] = v end
  end
end

local function copy(t) local out = {}; for k, v in pairs(t) do out[k] = v end; return out end

local POD_LEVEL = {"cpu", "memory"}

-- per-pod requests (name -> exact nano-units) of a PodSpec, as Kubernetes computes them
function R.pod_requests(spec)
  local reqs = {}
  if not J.isobj(spec) or spec == NULL then return reqs end
  local containers = spec.containers
  if containers ~= nil and J.kind(containers) == "array" then
    for i = 1, J.alen(containers) do add_into(reqs, container_requests(containers[i])) end
  end
  local inits = spec.initContainers
  if inits ~= nil and J.kind(inits) == "array" then
    local init_reqs, sidecars, has_sidecars = {}, {}, false
    for i = 1, J.alen(inits) do
      local c = inits[i]
      local creqs = container_requests(c)
      if J.isobj(c) and c ~= NULL and c.restartPolicy == "Always" then
        add_into(reqs, creqs)
        add_into(sidecars, creqs)
        has_sidecars = has_sidecars or next(creqs) ~= nil
        max_into(init_reqs, sidecars)
      elseif has_sidecars and next(sidecars) ~= nil then
        local candidate = copy(sidecars)
        add_into(candidate, creqs)
        max_into(init_reqs, candidate)
      else
        max_into(init_reqs, creqs)
      end
    end
    max_into(reqs, init_reqs)
  end
  local pod = spec.resources
  if pod ~= nil and J.truthy(pod) and not (J.isobj(pod) and next(pod) == nil) then
    local level = requirement_requests(pod)
    for _, name in ipairs(POD_LEVEL) do
      if level[name] then reqs[name] = level[name] end
    end
  end
  local overhead = spec.overhead
  if overhead ~= nil and J.truthy(overhead) and not (J.isobj(overhead) and next(overhead) == nil) then
    local extra = {}
    quantities_into(extra, overhead)
    add_into(reqs, extra)
  end
  return reqs
end

function R.fragment_requests(frag)
  local reqs = {}
  local containers = frag.containers
  if containers ~= nil and J.kind(containers) == "array" then
    for i = 1, J.alen(containers) do add_into(reqs, container_requests(containers[i])) end
  end
  if frag.container ~= nil then add_into(reqs, container_requests(frag.container)) end
  if next(reqs) == nil then reqs = requirement_requests(frag.resources) end
  return reqs
end

-- rounded per-pod totals: name -> magnitude string (cpu millis, others whole units), positive only
function R.totals(reqs)
  local out = {}
  for name, q in pairs(reqs) do
    local r = Q.ceil_shift(q, name == "cpu" and 6 or 9)
    if not r.neg and r.mag ~= "0" then out[name] = r.mag end
  end
  return out
end

-- per resource the largest of several totals
function R.max_totals(list)
  local out = {}
  for _, t in ipairs(list) do
    for name, mag in pairs(t) do
      if out[name] == nil or mag_cmp(mag, out[name]) > 0 then out[name] = mag end
    end
  end
  return out
end

function R.resource_list(totals)
  local names = {}
  for name in pairs(totals) do names[#names + 1] = name end
  if #names == 0 then return nil end
  local list = {}
  for _, name in ipairs(names) do list[name] = Q.text(name, totals[name]) end
  return list
end

-- the workload ------------------------------------------------------------------------------------

local function effective_spec(spec)
  if spec.template ~= nil then
    local s = spec.template.spec
    if s ~= nil and J.isobj(s) and s ~= NULL then return s end
    return nil
  end
  return spec.pod_spec
end
R.effective_spec = effective_spec

-- every component: {c=, ids=, n=, specs=, scales=}
function R.resolve(D, data)
  local out = {}
  for _, c in ipairs(D.components) do
    local ids, n = R.instance_ids(D, c, data)
    local specs = R.specs(D, c, data, n)
    local scales = R.scales(D, c, data, n)
    out[#out + 1] = {c = c, ids = ids, n = n, specs = specs, scales = scales}
  end
  return out
end

-- per instance of every component with a pod definition: what one pod needs (instance_needs)
function R.needs(D, data)
  local out = {}
  for _, rc in ipairs(R.resolve(D, data)) do
    local c = rc.c
    if c.pod then
      for i = 1, rc.n do
        local spec, scale = rc.specs[i], rc.scales[i]
        local eff = effective_spec(spec)
        local reqs
        if spec.template ~= nil or spec.pod_spec ~= nil then
          reqs = R.pod_requests(eff)
        elseif spec.fragments ~= nil then
          reqs = R.fragment_requests(spec.fragments)
        else
          reqs = {}
        end
        local need = {
          component = c.name, id = rc.ids[i], desired = desired(scale), scale = scale,
          totals = R.totals(reqs), multi = c.instance_id ~= nil,
          declared = spec.template ~= nil or spec.pod_spec ~= nil or spec.fragmented == true,
          spec = eff, fragments = spec.fragments,
        }
        if eff ~= nil then
          local ns, aff, tol, pcn = eff.nodeSelector, eff.affinity, eff.tolerations, eff.priorityClassName
          if ns ~= nil and J.isobj(ns) and ns ~= NULL then need.node_selector = ns end
          if aff ~= nil and J.isobj(aff) and aff ~= NULL then need.affinity = aff end
          if tol ~= nil and J.isarr(tol) and tol ~= NULL then need.tolerations = tol end
          if type(pcn) == "string" and pcn ~= "" then need.priority_class = pcn end
        elseif spec.fragments ~= nil then
          local f = spec.fragments
          if f.nodeAffinity ~= nil and next(f.nodeAffinity) ~= nil then need.affinity = {nodeAffinity = f.nodeAffinity} end
          if type(f.priorityClassName) == "string" and f.priorityClassName ~= "" then need.priority_class = f.priorityClassName end
        end
        out[#out + 1] = need
      end
    end
  end
  return out
end

-- status ---------------------------------------------------------------------------------------

R.SEVERITY = {"Failed", "Degraded", "Suspending", "Resuming", "Suspended", "Initializing", "Running", "Completed", "Undefined"}
local RANK = {}
for i, name in ipairs(R.SEVERITY) do RANK[name] = i end
R.RANK = RANK

local function read_conditions(D, c, st, data)
  local out = {}
  if not st.conditions then return out end
  local results, n = R.all(D, c.name, "statusDefinition.conditionsDefinition.path", st.conditions, data)
  for r = 1, n do
    local result = results[r]
    local items
    local k = J.kind(result)
    if k == "array" then items = result
    elseif k == "object" then items = {result}
    elseif k == "empty" then items = {}
    end
    if items then
      for i = 1, J.alen(items) do
        local item = items[i]
        if J.isobj(item) and item ~= NULL then
          local ctype = item[st.type_field]
          if type(ctype) == "string" and ctype ~= "" then
            local cs = item[st.status_field]
            local reason = st.reason_field and item[st.reason_field] or nil
            local message = st.message_field and item[st.message_field] or nil
            out[#out + 1] = {
              type = ctype,
              status = type(cs) == "string" and cs or "",
              reason = type(reason) == "string" and reason or nil,
              message = type(message) == "string" and message or nil,
            }
          end
        end
      end
    end
  end
  return out
end

local function matches(D, c, m, phase, index, data)
  if m.by_phase and m.by_phase ~= phase then return false end
  for _, cm in ipairs(m.by_conditions or {}) do
    local cond = index[cm.type]
    if cond == nil then return false end
    if cm.status and cm.status ~= "" and cm.status ~= cond.status then return false end
    if cm.reason and cm.reason ~= "" and cm.reason ~= (cond.reason or "") then return false end
  end
  if m.by_expression then
    local v = R.first(D, c.name, m.field, m.by_expression, data)
    if v == nil or v == NULL then return false end
    if v == true then return m.expected == "true" end
    if v == false then return m.expected == "false" end
    return text(v) == m.expected
  end
  return true
end

-- the status of component c: {phases=, matched=, primary=, phase=, conditions=}, or nil without a definition
function R.component_status(D, c, data)
  local st = c.status
  if not st then return nil end
  local phase
  if st.phase then
    local v = R.first(D, c.name, "statusDefinition.phaseDefinition.path", st.phase, data)
    if v ~= nil and v ~= NULL then phase = text(v) end
  end
  local conditions = read_conditions(D, c, st, data)
  local index = {}
  for _, cond in ipairs(conditions) do index[cond.type] = cond end
  local phases, matched = {}, {}
  for _, mapping in ipairs(st.mappings) do
    for i, m in ipairs(mapping.matchers) do
      if matches(D, c, m, phase, index, data) then
        phases[#phases + 1] = mapping.status
        -- 0-based, as WorkloadStatus.matched_by: which statusMappings.<status>[i] fired
        matched[#matched + 1] = i - 1
        break
      end
    end
  end
  if #phases == 0 then phases = {"Undefined"} end
  local primary = "Undefined"
  for _, name in ipairs(R.SEVERITY) do
    local found = false
    for _, p in ipairs(phases) do if p == name then found = true end end
    if found then primary = name; break end
  end
  return {phases = phases, matched = matched, primary = primary, phase = phase, conditions = conditions}
end

-- the workload's status: its root component's
function R.status(D, data)
  local root
  for _, c in ipairs(D.components) do if c.name == D.root then root = c end end
  return R.component_status(D, root, data) or {phases = {"Undefined"}, primary = "Undefined", conditions = {}}
end

-- values handed back to Karmada ----------------------------------------------------------------

-- a fresh plain copy (gopher-json fails on a table seen twice; jq null is no Lua value)
local function plain(v)
  if v == NULL or v == nil then return nil end
  if type(v) ~= "table" then return v end
  local out = {}
  if v == EA or v == EO then return out end
  local k = J.kind(v)
  if k == "array" then
    local n = 0
    for i = 1, J.alen(v) do
      local x = plain(v[i])
      if x ~= nil then n = n + 1; out[n] = x end
    end
  else
    for key, x in pairs(v) do out[key] = plain(x) end
  end
  return out
end
R.plain = plain

return R
