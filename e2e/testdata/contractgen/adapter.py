"""The e2e.contract service (e2e/contractapi) written with the Python SDK and the types
adapterctl contract gen writes (contractapi.py): each method returns its params."""

import adapterkit
from adapterkit.contract import implement

import contractapi as api


def same_everything(p: api.EverythingParams, ctx: adapterkit.RequestContext) -> api.EverythingResult:
    return p


async def same_event(p: api.EventParams, ctx: adapterkit.RequestContext) -> api.EventResult:
    return p


def same_tree(p: api.TreeParams, ctx: adapterkit.RequestContext) -> api.TreeResult:
    return p


svc = adapterkit.Service(api.E2E_CONTRACT_ID, api.E2E_CONTRACT_VERSION)
implement(svc, api.EverythingMethod, same_everything)
implement(svc, api.EventMethod, same_event)
implement(svc, api.TreeMethod, same_tree)

if __name__ == "__main__":
    adapterkit.run(adapterkit.Adapter(services=[svc]))
