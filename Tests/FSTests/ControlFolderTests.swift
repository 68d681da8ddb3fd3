import ASiC
import Foundation
@testable import FS
import TestTools
import XCTest

/// The `.asicfs` control folder, driven directly through the part API (`MountPart`) and the
/// router, without FUSE: its listing and files, sign requests checked at every write and taken
/// at the close, a real PKCS#12 signing against the loopback TSA/OCSP, the `remove` request of a
/// signature, and the refusals (EPERM on every removal, EROFS on a read-only mount).
final class ControlFolderTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "fs-control-part") }
    override class func tearDown() { shared.stop() }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func unsignedFixture(readOnly: Bool = false, settings: [(String, String)] = []) throws -> PartFixture {
        let fixture = try PartFixture(self)
        try TestContainers.unsigned(fixture.container, files: [("a.txt", Data("first\n".utf8))])
        try fixture.open(readOnly: readOnly, settings: settings)
        return fixture
    }

    func testTheControlFolderListsAndReadsItsFiles() throws {
        let fixture = try unsignedFixture()
        let control = fixture.control

        XCTAssertEqual(try fixture.router.list("/"), [".asicfs", "a.txt"], "the router puts the control folder at the top")
        XCTAssertEqual(try control.list(""), ["README", "container", "sign", "signatures", "status"])
        XCTAssertEqual(try control.list("status"), ["current", "last-error", "mobile-id", "smart-id", "id-card", "smart-id.png"],
                       "status/wait blocks: reachable by name, never listed")
        XCTAssertEqual(try control.list("signatures"), [])
        XCTAssertEqual(try control.attributes("status").kind, .directory)
        XCTAssertEqual(try control.attributes("status/wait").size, 0)
        XCTAssertEqual(try control.attributes("sign/pkcs12").permissions, 0o644)
        XCTAssertEqual(try control.attributes("README").permissions, 0o444)
        XCTAssertEqual(errnoOf { _ = try control.attributes("nothing") }, ENOENT)

        let summary = text(try contents(control, "container"))
        XCTAssertTrue(summary.contains("data files: 1\nsignatures: 0\nstate: unsigned: data files can be added"), summary)
        XCTAssertEqual(text(try contents(control, "status/current")), "idle\n")
        XCTAssertEqual(text(try contents(control, "status/wait")), "idle: no signing has run\n")
        XCTAssertEqual(text(try contents(control, "README")), ControlFolder.readme)
        // Through the router, by the mount's path: the same file.
        let opened = try fixture.router.open("/.asicfs/status/current", flags: O_RDONLY)
        XCTAssertTrue(opened.directIO)
        XCTAssertEqual(try fixture.router.attributes(handle: opened.handle).size, 5)
        fixture.router.release(opened.handle)
        XCTAssertEqual(errnoOf { _ = try control.open("README", flags: O_WRONLY) }, EACCES)
        XCTAssertEqual(errnoOf { _ = try control.open("sign", flags: O_RDONLY) }, EISDIR)
    }

    /// Nothing in `.asicfs` can be removed, made or renamed: a recursive delete that walks in
    /// changes nothing, and says how a signature is removed.
    func testRemovingAnythingInsideTheControlFolderIsEPERMAndChangesNothing() throws {
        let fixture = try unsignedFixture()
        let control = fixture.control, router = fixture.router

        XCTAssertEqual(errnoOf { try control.unlink("README") }, EPERM)
        XCTAssertTrue(router.errors.text.hasPrefix("cannot remove .asicfs/README: nothing in .asicfs can be removed"), router.errors.text)
        XCTAssertEqual(errnoOf { try control.removeFolder("sign") }, EPERM)
        XCTAssertEqual(errnoOf { try router.unlink("/.asicfs/status/current") }, EPERM)
        XCTAssertEqual(errnoOf { try router.removeFolder("/.asicfs") }, EPERM)
        XCTAssertEqual(errnoOf { try router.unlink("/.asicfs/nothing") }, ENOENT)
        // `rm` of an open file: libfuse renames it to `.fuse_hidden…` in its folder.
        XCTAssertEqual(errnoOf { try router.rename("/.asicfs/README", to: "/.asicfs/.fuse_hidden0001", flags: []) }, EPERM)
        XCTAssertEqual(errnoOf { try router.rename("/.asicfs/README", to: "/README", flags: []) }, EXDEV)
        XCTAssertEqual(errnoOf { try router.rename("/a.txt", to: "/.asicfs/a.txt", flags: []) }, EXDEV)
        XCTAssertEqual(errnoOf { try router.makeFolder("/.asicfs/new", mode: 0o755) }, EPERM)
        XCTAssertEqual(errnoOf { _ = try router.create("/.asicfs/new", flags: O_WRONLY, mode: 0o644) }, EACCES)
        XCTAssertEqual(try control.list(""), ["README", "container", "sign", "signatures", "status"])
        XCTAssertEqual(try fixture.data.list(""), ["a.txt"])
    }

    /// A request is checked at every write (EINVAL at once for an unknown key) and whole at its
    /// close: a request refused only then starts nothing, and `status/wait` and `last-error` say why.
    func testASignRequestIsCheckedAtItsWritesAndItsClose() throws {
        let fixture = try unsignedFixture()
        let control = fixture.control

        let bad = try control.open("sign/pkcs12", flags: O_WRONLY | O_TRUNC)
        XCTAssertEqual(errnoOf { try write(control, bad.file, Array("bogus=1 ".utf8)) }, EINVAL)
        XCTAssertTrue(fixture.router.errors.text.contains("bogus"), fixture.router.errors.text)
        control.release(bad.file)

        let request = try control.open("sign/pkcs12", flags: O_WRONLY | O_TRUNC)
        try control.truncate("sign/pkcs12", to: 0, file: request.file)
        // No newline: the missing file= is found only at the close.
        let passphrase = fixture.folder + "/passphrase"
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: passphrase))
        try write(control, request.file, Array("passphrase-file=\(passphrase)".utf8))
        control.release(request.file)

        // One read gives the line; after a failure's line the next read fails (EIO), so that
        // `cat status/wait` exits non-zero.
        let wait = try control.open("status/wait", flags: O_RDONLY)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = try buffer.withUnsafeMutableBytes { try control.read(wait.file, into: $0, at: 0, stop: { nil }) }
        let outcome = text(Array(buffer[..<count]))
        XCTAssertTrue(outcome.hasPrefix("failed: the pkcs12 request was refused: pkcs12: 'file=PATH' is required"), outcome)
        XCTAssertEqual(errnoOf { _ = try buffer.withUnsafeMutableBytes { try control.read(wait.file, into: $0, at: Int64(count), stop: { nil }) } }, EIO)
        control.release(wait.file)
        XCTAssertTrue(fixture.router.errors.text.hasSuffix("(the request was refused when its file was closed; nothing was signed)"),
                      fixture.router.errors.text)
        XCTAssertFalse(try Container.open(fixture.container).isSigned)
        XCTAssertNil(fixture.router.claim.activity, "a refused request claims nothing")
    }

    /// A real signing through the control folder (PKCS#12, loopback TSA and OCSP), then the
    /// signature's `remove` request: anything but `remove` is EINVAL; `remove` takes the
    /// signature out, atomically, and the data files can change again.
    func testASigningAndTheRemovalOfItsSignature() throws {
        guard let services = Self.shared.services else { return XCTFail("the loopback TSA/OCSP services: \(Self.shared.failure ?? "")") }
        let passphrase = NSTemporaryDirectory() + "asicfs-part-pass-\(getpid())"
        try Data((TestPKI.passphrase + "\n").utf8).write(to: URL(fileURLWithPath: passphrase))
        addTeardownBlock { unlink(passphrase) }
        let fixture = try unsignedFixture(settings: [("tsa-url", services.tsaURL), ("trust-anchors", services.pki.root)])
        let control = fixture.control, data = fixture.data

        let request = try control.open("sign/pkcs12", flags: O_WRONLY | O_TRUNC)
        try write(control, request.file, Array("file=\(services.pki.signerP12) passphrase-file=\(passphrase)\n".utf8))
        control.release(request.file)
        let outcome = text(try contents(control, "status/wait"))
        XCTAssertTrue(outcome.hasPrefix("done: "), outcome)
        XCTAssertTrue(try Container.open(fixture.container).isSigned)
        let folders = try control.list("signatures")
        XCTAssertEqual(folders.count, 1)
        let folder = try XCTUnwrap(folders.first)
        XCTAssertTrue(text(try contents(control, "signatures/\(folder)/signer")).contains("JÕEORG"))
        XCTAssertEqual(text(try contents(control, "signatures/\(folder)/method")), "pkcs12\n")
        XCTAssertEqual(errnoOf { _ = try data.create("b.txt", writeOnly: false) }, EPERM, "a signed container's data files are frozen")

        let remove = try control.open("signatures/\(folder)/remove", flags: O_WRONLY | O_TRUNC)
        XCTAssertEqual(errnoOf { try write(control, remove.file, Array("delete\n".utf8)) }, EINVAL)
        XCTAssertTrue(try Container.open(fixture.container).isSigned, "a wrong word removes nothing")
        try write(control, remove.file, Array("remove\n".utf8))
        control.release(remove.file)
        XCTAssertFalse(try Container.open(fixture.container).isSigned)
        XCTAssertEqual(try control.list("signatures"), [])
        XCTAssertNil(fixture.router.claim.activity)
        let created = try data.create("b.txt", writeOnly: true)
        data.release(created.file)
        XCTAssertNil(fixture.router.close())
        XCTAssertEqual(try containerContents(fixture.container), ["a.txt": Array("first\n".utf8), "b.txt": []])
    }

    /// A read-only mount takes no requests (EROFS) and says why it is read-only.
    func testAReadOnlyMountTakesNoRequests() throws {
        let fixture = try unsignedFixture(readOnly: true)
        let control = fixture.control
        XCTAssertEqual(errnoOf { _ = try control.open("sign/pkcs12", flags: O_WRONLY) }, EROFS)
        XCTAssertEqual(try control.attributes("sign/pkcs12").permissions, 0o444)
        XCTAssertEqual(errnoOf { try fixture.router.claim.claim("a test signing", for: "start a test signing") }, EROFS)
        let summary = text(try contents(control, "container"))
        XCTAssertTrue(summary.contains("state: read-only (mounted with -o ro)"), summary)
    }
}
