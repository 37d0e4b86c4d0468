-- Argo CD health of an OLM v1 ClusterExtension (olm.operatorframework.io/v1,
-- operator-controller v1.5.1's conditions): Healthy once a bundle is
-- Installed and nothing is pending; Degraded when operator-controller stopped
-- trying (Progressing reason Blocked); Progressing otherwise, with its reason
-- and message (Retrying: a resolution, pull or install error it retries).
-- Base and table functions only (runs from argocd-cm without useOpenLibs).
local hs = {status = "Progressing", message = "Waiting for operator-controller to report a status"}
local st = obj.status
if st == nil or st.conditions == nil then
  return hs
end
local conditions = {}
for _, c in ipairs(st.conditions) do
  conditions[c.type] = c
end
local function says(c)
  if c.message ~= nil and c.message ~= "" then
    return c.reason .. ": " .. c.message
  end
  return c.reason
end
local progressing = conditions["Progressing"]
local installed = conditions["Installed"]
local generation = obj.metadata.generation
if progressing ~= nil and generation ~= nil and progressing.observedGeneration ~= nil and progressing.observedGeneration < generation then
  hs.message = "Waiting for operator-controller to resolve generation " .. tostring(generation)
  return hs
end
if progressing ~= nil and progressing.reason == "Blocked" then
  hs.status = "Degraded"
  hs.message = says(progressing)
  return hs
end
if progressing ~= nil and progressing.status == "True" and progressing.reason == "Retrying" then
  hs.message = says(progressing)
  return hs
end
if installed ~= nil and installed.status == "True" then
  hs.status = "Healthy"
  hs.message = says(installed)
  return hs
end
if installed ~= nil then
  hs.message = says(installed)
end
return hs
