-- Argo CD health of an EvalHub served by ai-stack-operator.
-- It uses Lua's base and table functions only, so it runs as Argo CD runs
-- scripts from argocd-cm without resource.customizations.useOpenLibs.
local hs = {status = "Progressing", message = "Waiting for the operator to report a status"}
local st = obj.status
if st == nil then
  return hs
end
local generation = obj.metadata.generation
if generation ~= nil and (st.observedGeneration == nil or st.observedGeneration < generation) then
  hs.message = "Waiting for the operator to reconcile generation " .. tostring(generation)
  return hs
end
local conditions = {}
if st.conditions ~= nil then
  for _, c in ipairs(st.conditions) do
    conditions[c.type] = c
  end
end
local function says(c)
  if c.message ~= nil and c.message ~= "" then
    return c.reason .. ": " .. c.message
  end
  return c.reason
end
-- A spec, a setting or an installation problem that someone must fix.
local reconciled = conditions["Reconciled"]
if reconciled ~= nil and reconciled.status == "False" then
  if reconciled.reason ~= "ReleaseBusy" then
    hs.status = "Degraded"
  end
  hs.message = says(reconciled)
  return hs
end
local trust = conditions["TrustReady"]
if trust ~= nil and trust.status == "False" then
  hs.status = "Degraded"
  hs.message = says(trust)
  return hs
end
-- A provider or collection the spec lists has no definition: the server
-- runs without it until someone installs it or edits the list.
for _, t in ipairs({"ProvidersReady", "CollectionsReady"}) do
  local c = conditions[t]
  if c ~= nil and c.status == "False" then
    hs.status = "Degraded"
    hs.message = says(c)
    return hs
  end
end
local deployment = conditions["DeploymentReady"]
-- Pods that cannot be created (quota, admission) or a rollout past its deadline.
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
