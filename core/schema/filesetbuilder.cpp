#include "filesetbuilder.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/message_differencer.h>

#include <functional>
#include <set>

namespace gp = google::protobuf;

namespace rpcscope {

bool FileSetBuilder::add(const gp::FileDescriptorProto &file, const QString &origin, QString *error)
{
    const auto existing = m_files.find(file.name());
    if (existing == m_files.end()) {
        m_files.emplace(file.name(), Entry { file, origin });
        m_order.push_back(file.name());
        return true;
    }
    // Compared as messages, not bytes: two protoc runs may order fields differently on the wire.
    if (gp::util::MessageDifferencer::Equals(existing->second.file, file))
        return true;
    if (error) {
        *error = QStringLiteral("\"%1\" differs from the copy in %2")
                     .arg(QString::fromStdString(file.name()), existing->second.origin);
    }
    return false;
}

bool FileSetBuilder::contains(const std::string &name) const
{
    return m_files.count(name) != 0;
}

bool FileSetBuilder::isEmpty() const
{
    return m_files.empty();
}

std::vector<FileSetBuilder::MissingImport> FileSetBuilder::missingImports() const
{
    std::vector<MissingImport> out;
    std::set<std::string> seen;
    for (const std::string &name : m_order) {
        const Entry &entry = m_files.at(name);
        for (const std::string &import : entry.file.dependency()) {
            if (!contains(import) && seen.insert(import).second)
                out.push_back({ import, name, entry.origin });
        }
    }
    return out;
}

void FileSetBuilder::addBuiltinWellKnownTypes()
{
    // Well-known types import each other (type.proto imports any.proto), hence the loop.
    bool added = true;
    while (added) {
        added = false;
        for (const MissingImport &missing : missingImports()) {
            if (missing.import.rfind("google/protobuf/", 0) != 0)
                continue;
            const gp::FileDescriptor *builtin = gp::DescriptorPool::generated_pool()->FindFileByName(missing.import);
            if (!builtin)
                continue;
            gp::FileDescriptorProto proto;
            builtin->CopyTo(&proto);
            added = add(proto, QStringLiteral("the built-in well-known types"), nullptr) || added;
        }
    }
}

gp::FileDescriptorSet FileSetBuilder::fileDescriptorSet() const
{
    gp::FileDescriptorSet set;
    std::set<std::string> done;
    std::function<void(const std::string &)> visit = [&](const std::string &name) {
        const auto it = m_files.find(name);
        if (it == m_files.end() || !done.insert(name).second)
            return;
        for (const std::string &import : it->second.file.dependency())
            visit(import);
        *set.add_file() = it->second.file;
    };
    for (const std::string &name : m_order)
        visit(name);
    return set;
}

} // namespace rpcscope
