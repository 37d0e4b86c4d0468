-- Argo CD health of an LMEvalJob (upstream's status, state and reason, plus
-- this operator's Valid condition): Progressing while it runs, Healthy when
-- it succeeded, Degraded when it failed or cannot run, Suspended while
-- suspended or cancelled. Base and table functions only (argocd-cm scripts
-- run without resource.customizations.useOpenLibs).
local hs = {status = "Progressing", message = "Waiting for the operator to report a status"}
local st = obj.status
if st == nil or st.state == nil then
  return hs
end
local function with(prefix, msg)
  if msg ~= nil and msg ~= "" then
    return prefix .. ": " .. msg
  end
  return prefix
end
if st.conditions ~= nil then
  for _, c in ipairs(st.conditions) do
    if c.type == "Valid" and c.status == "False" and st.state ~= "Complete" then
      hs.status = "Degraded"
      hs.message = with(c.reason, c.message)
      return hs
    end
  end
end
if st.state == "Complete" then
  if st.reason == "Succeeded" then
    hs.status = "Healthy"
  elseif st.reason == "Cancelled" then
    hs.status = "Suspended"
  else
    hs.status = "Degraded"
  end
  hs.message = with("Complete (" .. tostring(st.reason) .. ")", st.message)
  return hs
end
if st.state == "Suspended" or st.state == "Cancelled" then
  hs.status = "Suspended"
  hs.message = with(st.state, st.message)
  return hs
end
local msg = st.message
if st.progressBars ~= nil and #st.progressBars > 0 then
  local bar = st.progressBars[#st.progressBars]
  msg = tostring(bar.message) .. " " .. tostring(bar.percent) .. " (" .. tostring(bar.count) .. ")"
end
hs.message = with(st.state, msg)
return hs
