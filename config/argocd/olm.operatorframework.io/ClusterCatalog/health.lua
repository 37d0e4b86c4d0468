-- Argo CD health of an OLM v1 ClusterCatalog (olm.operatorframework.io/v1,
-- catalogd v1.5.1's conditions): Healthy while its content is Serving (a
-- failing poll of a newer image keeps the last content served, so the
-- message then says why); Degraded when catalogd stopped trying (Progressing
-- reason Blocked) and nothing is served; Suspended when its availability is
-- set to Unavailable; Progressing otherwise.
-- Base and table functions only (runs from argocd-cm without useOpenLibs).
local hs = {status = "Progressing", message = "Waiting for catalogd to unpack the catalog"}
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
local serving = conditions["Serving"]
local progressing = conditions["Progressing"]
if serving ~= nil and serving.status == "True" then
  hs.status = "Healthy"
  hs.message = says(serving)
  if progressing ~= nil and progressing.reason ~= "Succeeded" then
    hs.message = hs.message .. " (" .. says(progressing) .. ")"
  end
  return hs
end
if serving ~= nil and serving.reason == "UserSpecifiedUnavailable" then
  hs.status = "Suspended"
  hs.message = says(serving)
  return hs
end
if progressing ~= nil and progressing.reason == "Blocked" then
  hs.status = "Degraded"
  hs.message = says(progressing)
  return hs
end
if progressing ~= nil then
  hs.message = says(progressing)
elseif serving ~= nil then
  hs.message = says(serving)
end
return hs
