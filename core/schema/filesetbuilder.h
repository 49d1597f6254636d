#pragma once

#include <QString>

#include <google/protobuf/descriptor.pb.h>

#include <map>
#include <string>
#include <vector>

namespace rpcscope {

// Gathers file descriptors from several places (protoset files, reflection replies) into one FileDescriptorSet in
// dependency order, noticing differing copies of one file and imports that no one provided. Shared by the protoset
// and reflection loaders so both treat duplicates and the well-known types alike.
class FileSetBuilder {
public:
    struct MissingImport {
        std::string import;
        std::string importer; ///< the first file found importing it
        QString origin; ///< where the importer came from
    };

    /// Adds @p file, read from @p origin. A second identical copy is ignored; a differing one is refused.
    bool add(const google::protobuf::FileDescriptorProto &file, const QString &origin, QString *error);
    bool contains(const std::string &name) const;
    bool isEmpty() const;
    /// Imports that no added file provides, once each, in the order they were first seen.
    std::vector<MissingImport> missingImports() const;
    /// Fills missing google/protobuf/*.proto imports (and theirs) from the copies built into libprotobuf.
    void addBuiltinWellKnownTypes();
    /// Every file after the files it imports.
    google::protobuf::FileDescriptorSet fileDescriptorSet() const;

private:
    struct Entry {
        google::protobuf::FileDescriptorProto file;
        QString origin;
    };
    std::map<std::string, Entry> m_files;
    std::vector<std::string> m_order; // as added, so the output does not depend on names
};

} // namespace rpcscope
