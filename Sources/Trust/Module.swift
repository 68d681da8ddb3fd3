// Trust anchors and trusted lists (see TrustStore.swift).
