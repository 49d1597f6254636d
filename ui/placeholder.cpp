namespace rpcscope { void uiPlaceholder() {} }
