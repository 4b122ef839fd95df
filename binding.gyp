{
  "targets": [
    {
      "target_name": "vouch_scan",
      "sources": ["native/addon.c", "native/treeScan.c", "native/pathStats.c", "native/dirCache.c", "native/sourceList.c", "native/observerCall.c", "native/queueWatch.c", "native/treeWatch.c"],
      "cflags": ["-O2", "-pthread", "-std=gnu11"],
      "ldflags": ["-pthread"],
      "defines": ["NAPI_VERSION=8"],
      "conditions": [["OS=='win'", { "sources!": ["native/addon.c", "native/treeScan.c", "native/pathStats.c", "native/dirCache.c", "native/sourceList.c", "native/observerCall.c", "native/queueWatch.c", "native/treeWatch.c"] }], ["OS!='linux'", { "sources!": ["native/treeWatch.c"] }]]
    },
    {
      "target_name": "vouch_hook",
      "type": "executable",
      "sources": ["native/hookClient.c", "native/clientRun.c"],
      "cflags": ["-O2", "-std=gnu11"],
      "conditions": [["OS!='linux'", { "type": "none", "sources!": ["native/hookClient.c", "native/clientRun.c"] }]]
    }
  ]
}
