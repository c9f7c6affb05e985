//! A call's arguments: by keyword, by position, or either.

use gpulens_syntax::NodeExt;

use gpulens_syntax::Node;

use super::*;

impl<'t> Module<'t> {
    /// The source text of keyword argument `name` of a call, if given.
    pub fn keyword<'a>(&self, call: Node<'a>, name: &str) -> Option<Node<'a>> {
        let args = call.field("arguments")?;
        let mut cursor = args.walk();
        let found = args.named_children(&mut cursor).find(|n| {
            n.kind_name() == "keyword_argument" && n.field("name").is_some_and(|k| self.text_of(k) == name)
        });
        found.and_then(|n| n.field("value"))
    }

    /// Whether any argument of a call holds data already on the GPU.
    pub fn any_arg_on_device(&self, call: Node<'_>, scope: usize) -> bool {
        if !self.mentions_gpu_library() {
            return false;
        }
        if let Some(operands) = matmul_operands(call) {
            return operands.iter().any(|o| matches!(self.value(*o, scope), Value::Device(_)));
        }
        let Some(args) = call.field("arguments") else { return false };
        let mut cursor = args.walk();
        let found = args.named_children(&mut cursor).any(|a| {
            let a = if a.kind_name() == "keyword_argument" { a.field("value") } else { Some(a) };
            a.is_some_and(|a| matches!(self.value(a, scope), Value::Device(_)))
        });
        found
    }

    /// The array a mirrored method is called on (`a` in `a.dot(b)`), when
    /// `call` is one (see [`Module::resolve_mirror`]): the function's first argument.
    pub(crate) fn mirror_receiver<'a>(&self, call: Node<'a>) -> Option<Node<'a>> {
        if !self.mirror_calls.borrow().contains(&call.id()) {
            return None;
        }
        call.field("function").and_then(|f| f.field("object"))
    }

    /// The argument given by keyword `name` or, failing that, at position
    /// `index` (a mirrored method's array first).
    pub fn argument<'a>(&self, call: Node<'a>, name: &str, index: usize) -> Option<Node<'a>> {
        if let Some(operands) = matmul_operands(call) {
            return operands.get(index).copied();
        }
        if let Some(value) = self.keyword(call, name) {
            return Some(value);
        }
        let index = match self.mirror_receiver(call) {
            Some(receiver) if index == 0 => return Some(receiver),
            Some(_) => index - 1,
            None => index,
        };
        let args = call.field("arguments")?;
        let mut cursor = args.walk();
        let found = args
            .named_children(&mut cursor)
            .filter(|n| !matches!(n.kind_name(), "keyword_argument" | "comment"))
            .take_while(|n| !matches!(n.kind_name(), "list_splat" | "dictionary_splat"))
            .nth(index);
        found
    }

    /// The first positional argument of a call (a mirrored method's array).
    pub fn first_positional<'a>(&self, call: Node<'a>) -> Option<Node<'a>> {
        if let Some([left, _]) = matmul_operands(call) {
            return Some(left);
        }
        if let Some(receiver) = self.mirror_receiver(call) {
            return Some(receiver);
        }
        let args = call.field("arguments")?;
        let mut cursor = args.walk();
        let found = args.named_children(&mut cursor).find(|n| !matches!(n.kind_name(), "keyword_argument" | "comment"));
        found
    }
}

impl<'t> Module<'t> {
    /// The positional arguments of `call`, in order (a mirrored method's
    /// array first; no keywords, no comments).
    pub(crate) fn positional<'a>(&self, call: Node<'a>) -> Vec<Node<'a>> {
        if let Some(operands) = matmul_operands(call) {
            return operands.to_vec();
        }
        let mut args = positional_arguments(call);
        if let Some(receiver) = self.mirror_receiver(call) {
            args.insert(0, receiver);
        }
        args
    }
}

/// The two operands of a matrix product written `a @ b`, which stands for
/// `np.matmul(a, b)` (see [`Module::resolve_matmul`]).
pub(crate) fn matmul_operands(node: Node<'_>) -> Option<[Node<'_>; 2]> {
    if node.kind_name() != "binary_operator" {
        return None;
    }
    Some([node.field("left")?, node.field("right")?])
}

/// The positional arguments of `call`, in order (no keywords, no comments).
pub(crate) fn positional_arguments(call: Node<'_>) -> Vec<Node<'_>> {
    call.field("arguments").map_or(Vec::new(), |a| {
        let mut cursor = a.walk();
        a.named_children(&mut cursor).filter(|n| !matches!(n.kind_name(), "comment" | "keyword_argument")).collect()
    })
}

/// The name a parameter binds (`x`, `x: int`, `x=1`, `*args`, `**kwargs`);
/// none for the bare `*` and `/` separators.
pub(crate) fn parameter_name(param: Node<'_>) -> Option<Node<'_>> {
    match param.kind_name() {
        "identifier" => Some(param),
        "default_parameter" | "typed_default_parameter" => param.field("name").filter(|n| n.kind_name() == "identifier"),
        "typed_parameter" => param.named_child(0).and_then(|n| if n.kind_name() == "identifier" { Some(n) } else { parameter_name(n) }),
        "list_splat_pattern" | "dictionary_splat_pattern" => param.named_child(0).filter(|n| n.kind_name() == "identifier"),
        _ => None,
    }
}
