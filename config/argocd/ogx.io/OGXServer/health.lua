-- Argo CD health of an OGXServer served by ai-stack-operator.
-- It uses Lua's base and table functions only, so it runs as Argo CD runs
-- scripts from argocd-cm without resource.customizations.useOpenLibs.
-- OGXServer's status has no observedGeneration (upstream's API): the
-- Reconciled condition's observedGeneration says which spec was looked at.
local hs = {status = "Progressing", message = "Waiting for the operator to report a status"}
local st = obj.status
if st == nil or st.conditions == nil then
  return hs
end
local conditions = {}
for _, c in ipairs(st.conditions) do
  conditions[c.type] = c
end
local reconciled = conditions["Reconciled"]
if reconciled == nil then
  return hs
end
local generation = obj.metadata.generation
if generation ~= nil and (reconciled.observedGeneration == nil or reconciled.observedGeneration < generation) then
  hs.message = "Waiting for the operator to reconcile generation " .. tostring(generation)
  return hs
end
local function says(c)
  if c.message ~= nil and c.message ~= "" then
    return c.reason .. ": " .. c.message
  end
  return c.reason
end
-- A spec, a setting or an installation problem that someone must fix.
if reconciled.status == "False" then
  if reconciled.reason ~= "ReleaseBusy" then
    hs.status = "Degraded"
  end
  hs.message = says(reconciled)
  return hs
end
for _, t in ipairs({"TrustReady", "ConfigGenerated"}) do
  local c = conditions[t]
  if c ~= nil and c.status == "False" and c.reason ~= "ConfigGenerationInactive" then
    hs.status = "Degraded"
    hs.message = says(c)
    return hs
  end
end
local deployment = conditions["DeploymentReady"]
if deployment ~= nil and deployment.status == "False" and (deployment.reason == "RolloutStuck" or deployment.reason == "PodCreationFailed") then
  hs.status = "Degraded"
  hs.message = says(deployment)
  return hs
end
local ready = conditions["Ready"]
if ready ~= nil then
  if ready.status == "True" then
    hs.status = "Healthy"
  end
  hs.message = says(ready)
end
return hs
