-- Karmada's interpreter operations over the resolver runtime R, for exported customizations:
-- the same rules as workload_map.interpret in Python (docs/multicluster.md). A chunk taking
-- J, R and D (the definition) and returning the table K of entry points.
local J, R, D = ...
local K = {}
local INT32_MAX = 2147483647
local MAX_NAME = 32

local function namespace_of(obj)
  local meta = obj.metadata
  if meta ~= nil and type(meta) == "table" and type(meta.namespace) == "string" and meta.namespace ~= "" then
    return meta.namespace
  end
  return nil
end

local function declared(needs)
  local out = {}
  for _, n in ipairs(needs) do if n.declared then out[#out + 1] = n end end
  return out
end

local function requirements(need, request, namespace)
  local out, claim = {}, {}
  local aff = need.affinity
  local na = aff and aff.nodeAffinity
  if na ~= nil and J.isobj(na) and na ~= J.NULL then
    local hard = na.requiredDuringSchedulingIgnoredDuringExecution
    if hard ~= nil and J.isobj(hard) and hard ~= J.NULL then claim.hardNodeAffinity = R.plain(hard) end
  end
  if need.node_selector ~= nil and next(need.node_selector) ~= nil then claim.nodeSelector = R.plain(need.node_selector) end
  if need.tolerations ~= nil and J.alen(need.tolerations) > 0 then claim.tolerations = R.plain(need.tolerations) end
  if next(claim) ~= nil then out.nodeClaim = claim end
  if request ~= nil then out.resourceRequest = request end
  if namespace ~= nil then out.namespace = namespace end
  if need.priority_class ~= nil then out.priorityClassName = need.priority_class end
  if next(out) == nil then return nil end
  return out
end

function K.GetReplicas(obj)
  local pods = declared(R.needs(D, obj))
  if #pods == 0 then return 0, nil end
  local total, totals = 0, {}
  for i, n in ipairs(pods) do total = total + n.desired; totals[i] = n.totals end
  if total > INT32_MAX then error("the workload asks for " .. total .. " pods, more than Karmada's int32 replicas hold", 0) end
  return total, requirements(pods[1], R.resource_list(R.max_totals(totals)), namespace_of(obj))
end

-- the first n code points of s
local function ucut(s, n)
  local count = 0
  for p = 1, #s do
    local b = string.byte(s, p)
    if b < 128 or b >= 192 then
      if count == n then return string.sub(s, 1, p - 1) end
      count = count + 1
    end
  end
  return s
end

-- unique names within Karmada's limit: as workload_map.interpret.requirements.component_names
local function component_names(natural)
  local used, out, n = {}, {}, #natural
  for i, name in ipairs(natural) do
    local candidate, k = name, i - 1
    while J.ulen(candidate) > MAX_NAME or used[candidate] do
      local suffix = "-" .. J.numtext(k)
      candidate = ucut(name, MAX_NAME - #suffix) .. suffix
      k = k + n
    end
    used[candidate] = true
    out[i] = candidate
  end
  return out
end

function K.GetComponents(obj)
  local pods = declared(R.needs(D, obj))
  local natural = {}
  for i, p in ipairs(pods) do
    natural[i] = (p.multi and p.id ~= "") and p.id or p.component
  end
  local names = component_names(natural)
  local out = {}
  for i, p in ipairs(pods) do
    local entry = {name = names[i], replicas = p.desired}
    local req = requirements(p, R.resource_list(p.totals), nil)
    if req ~= nil then entry.replicaRequirements = req end
    out[i] = entry
  end
  return out
end

-- total split over weights: proportional by largest remainder, or evenly (workload_map.interpret.revise.share)
local function share(total, weights)
  local n, whole = #weights, 0
  for _, w in ipairs(weights) do whole = whole + w end
  local parts = {}
  if n == 0 then return parts end
  if whole == 0 then
    local base, extra = math.floor(total / n), total % n
    for i = 1, n do parts[i] = base + ((i <= extra) and 1 or 0) end
    return parts
  end
  local rems, given = {}, 0
  for i, w in ipairs(weights) do
    parts[i] = math.floor(total * w / whole)
    rems[i] = total * w - parts[i] * whole
    given = given + parts[i]
  end
  local order = {}
  for i = 1, n do order[i] = i end
  table.sort(order, function(a, b)
    if rems[a] ~= rems[b] then return rems[a] > rems[b] end
    return a < b
  end)
  for j = 1, total - given do parts[order[j]] = parts[order[j]] + 1 end
  return parts
end
K.share = share

-- the paths a component's replicas path denotes in obj
local function replica_paths(c, obj)
  local out = {}
  J.start()
  local ok, e = pcall(c.replicas_paths, obj, J.EA, function(_, p) out[#out + 1] = p end)
  J.stop()
  if not ok then error(e, 0) end
  return out
end

function K.ReviseReplica(obj, count)
  local needs = R.needs(D, obj)
  local pods = declared(needs)
  local current = 0
  for _, n in ipairs(pods) do current = current + n.desired end
  if count == current then return obj end
  local comps, order = {}, {}
  for _, c in ipairs(D.components) do comps[c.name] = c end
  local by_comp = {}
  for _, n in ipairs(needs) do
    if not by_comp[n.component] then by_comp[n.component] = {}; order[#order + 1] = n.component end
    local list = by_comp[n.component]
    list[#list + 1] = n
  end
  local scalable, fixed_names = {}, {}
  local paths_of = {}
  for _, name in ipairs(order) do
    local c, list = comps[name], by_comp[name]
    local ok = false
    if c.replicas_paths then
      local okp, paths = pcall(replica_paths, c, obj)
      if okp and (not c.instance_id or #paths == #list) then ok = true; paths_of[name] = paths end
    end
    local any_declared = false
    for _, n in ipairs(list) do if n.declared then any_declared = true end end
    if ok then
      for _, n in ipairs(list) do if n.declared then scalable[#scalable + 1] = n end end
    elseif any_declared then
      fixed_names[#fixed_names + 1] = name
    end
  end
  if #scalable == 0 then
    error("cannot revise replicas to " .. count .. " (the object has " .. current .. "): no component can be scaled: "
      .. table.concat(fixed_names, ", "), 0)
  end
  local weights, scaled = {}, 0
  for i, n in ipairs(scalable) do weights[i] = n.desired; scaled = scaled + n.desired end
  local fixed = current - scaled
  if count < fixed then
    error("cannot revise replicas to " .. count .. ": " .. fixed .. " pods belong to components that cannot be scaled: "
      .. table.concat(fixed_names, ", "), 0)
  end
  local targets = share(count - fixed, weights)
  local wanted = {}
  for _, n in ipairs(needs) do
    wanted[n.component] = wanted[n.component] or {}
    wanted[n.component][n.id] = n.desired
  end
  local written = {}
  for i, n in ipairs(scalable) do wanted[n.component][n.id] = targets[i]; written[n.component] = true end
  local new = obj
  for _, name in ipairs(order) do
    if written[name] then
      local c, list, paths = comps[name], by_comp[name], paths_of[name]
      for i, p in ipairs(paths) do
        local value
        if c.instance_id then value = wanted[name][list[i].id] else value = wanted[name][list[1].id] end
        new = J.setpath(new, p, value)
      end
    end
  end
  local got = 0
  for _, n in ipairs(declared(R.needs(D, new))) do got = got + n.desired end
  if got ~= count then
    error("cannot revise replicas to " .. count .. ": after writing the scale paths the object has " .. got .. " pods", 0)
  end
  return R.plain(new)
end

-- Retain: with Karmada's retain-replicas label, the member's replica fields
local function copy_field(desired, observed, path, i)
  local key = path[i]
  local last = i == #path
  if key == "[]" then
    local kd, ko = J.kind(desired), J.kind(observed)
    local keys = {}
    if kd == "array" and ko == "array" then
      for j = 1, math.min(J.alen(desired), J.alen(observed)) do keys[#keys + 1] = j end
    elseif kd == "object" and ko == "object" then
      for k in pairs(desired) do if observed[k] ~= nil then keys[#keys + 1] = k end end
    else
      return
    end
    for _, k in ipairs(keys) do
      if last then desired[k] = R.plain(observed[k]) else copy_field(desired[k], observed[k], path, i + 1) end
    end
    return
  end
  if type(desired) ~= "table" or type(observed) ~= "table" or J.kind(desired) ~= "object" or observed[key] == nil then return end
  if last then
    desired[key] = R.plain(observed[key])
  elseif desired[key] ~= nil then
    copy_field(desired[key], observed[key], path, i + 1)
  end
end

function K.Retain(desired, observed)
  local labels = desired.metadata and desired.metadata.labels
  if type(labels) ~= "table" or labels["resourcetemplate.karmada.io/retain-replicas"] ~= "true" then return desired end
  for _, path in ipairs(D.replica_fields or {}) do
    if #path > 0 then copy_field(desired, observed, path, 1) end
  end
  return desired
end

function K.ReflectStatus(obj)
  local status = obj.status
  if type(status) == "table" then return R.plain(status) end
  return {}
end

K.HEALTHY = {Running = true, Completed = true}

function K.InterpretHealth(obj)
  return K.HEALTHY[R.status(D, obj).primary] == true
end

function K.AggregateStatus(desired, items)
  local best, best_rank
  for _, item in ipairs(items or {}) do
    local status = item.status
    if type(status) == "table" then
      local member = {}
      for k, v in pairs(desired) do member[k] = v end
      member.status = status
      local ok, st = pcall(R.status, D, member)
      local rank = ok and R.RANK[st.primary] or R.RANK.Undefined
      if best == nil or rank < best_rank then best, best_rank = status, rank end
    end
  end
  if best == nil then return desired end
  desired.status = R.plain(best)
  return desired
end

function K.GetDependencies(obj, kube)
  local rc = R.resolve(D, obj)
  local seen, out = {}, {}
  local namespace = obj.metadata and obj.metadata.namespace or nil
  for _, comp in ipairs(rc) do
    if comp.c.pod then
      for i = 1, comp.n do
        local spec = comp.specs[i]
        local eff = R.effective_spec(spec)
        local template
        if eff ~= nil then
          template = {spec = R.plain(eff)}
        elseif spec.fragments ~= nil then
          local containers = {}
          local f = spec.fragments
          if f.containers ~= nil then for j = 1, J.alen(f.containers) do containers[#containers + 1] = R.plain(f.containers[j]) end end
          if f.container ~= nil then containers[#containers + 1] = R.plain(f.container) end
          template = {spec = {containers = containers}}
        end
        if template ~= nil then
          local deps = kube.getPodDependencies(template, namespace)
          for _, d in ipairs(deps or {}) do
            local key = d.kind .. "/" .. d.name
            if not seen[key] then seen[key] = true; out[#out + 1] = d end
          end
        end
      end
    end
  end
  return out
end

return K
